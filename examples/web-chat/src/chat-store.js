// The chat's id lives in the address (?chat=…), so a reload is the same chat (the same statecraft session), and its
// messages in localStorage, so a reload shows them again. An assistant message that was still streaming is dropped:
// the resumed stream replays the run it belongs to from its start.

export function chatId() {
  const url = new URL(window.location.href);
  let id = url.searchParams.get("chat");
  if (!id) {
    id = crypto.randomUUID();
    url.searchParams.set("chat", id);
    window.history.replaceState(null, "", url);
  }
  return id;
}

const key = (id) => `statecraft-chat:${id}`;

export function loadMessages(id) {
  try {
    const saved = JSON.parse(localStorage.getItem(key(id)) ?? "null");
    if (!saved) return [];
    const messages = saved.messages;
    const streaming = saved.status === "streaming" || saved.status === "submitted";
    return streaming && messages.at(-1)?.role === "assistant" ? messages.slice(0, -1) : messages;
  } catch {
    return [];
  }
}

export function saveMessages(id, messages, status) {
  localStorage.setItem(key(id), JSON.stringify({ messages, status }));
}
