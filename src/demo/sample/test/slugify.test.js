import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

test("one word", () => {
  assert.equal(slugify("Hello"), "hello");
});

test("two words", () => {
  assert.equal(slugify("Hello World"), "hello-world");
});

test("three words", () => {
  assert.equal(slugify("Hello Big World"), "hello-big-world");
});

test("spaces around", () => {
  assert.equal(slugify("  State machines  "), "state-machines");
});
