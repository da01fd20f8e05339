// Small DOM and text helpers shared by the page's parts. Every piece of run data goes in as text (textContent).

export const $ = (id) => document.getElementById(id);

export function textElement(tag, text, className) {
  const el = document.createElement(tag);
  el.textContent = text;
  if (className) el.className = className;
  return el;
}

export function block(title, value, className) {
  const section = document.createElement("section");
  if (className) section.className = className;
  section.append(textElement("h3", title), textElement("pre", JSON.stringify(value, null, 2), "json"));
  return section;
}

export function snippet(text, max) {
  const one = String(text).replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function formatTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso ?? "");
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function formatMs(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${Math.floor(ms / 60_000)} min${seconds ? ` ${seconds} s` : ""}`;
}
