/**
 * Turns a title into a URL slug: lower case, words joined by "-".
 * slugify("Hello Big World") === "hello-big-world"
 */
export function slugify(title) {
  return title.trim().toLowerCase().replace(" ", "-");
}
