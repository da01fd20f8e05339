import type { EngineEvent } from "../machine/events.js";

/** How work in progress tells the engine what happens as it happens (a model's text, a tool starting, a question asked). */
export type Report = (event: EngineEvent) => void;
