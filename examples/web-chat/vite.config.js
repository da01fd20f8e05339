import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The page talks to its own origin; Vite passes /api on to `statecraft serve` and adds the bearer token there, so
// the token never reaches the browser. STATECRAFT_URL (default http://127.0.0.1:8787) and STATECRAFT_TOKEN (what
// `statecraft serve` printed) come from the environment.
const target = process.env.STATECRAFT_URL ?? "http://127.0.0.1:8787";
const token = process.env.STATECRAFT_TOKEN ?? "";

const proxy = {
  "/api": {
    target,
    changeOrigin: true,
    headers: { authorization: `Bearer ${token}` },
    configure(server) {
      // The proxy is statecraft's client here (it holds the token): the page's Origin stays with the proxy.
      server.on("proxyReq", (request) => request.removeHeader("origin"));
    },
  },
};

export default defineConfig({
  plugins: [react()],
  server: { proxy },
  preview: { proxy },
});
