// A page's use of kioskd.js, run by node for KioskJSTests: node has no EventSource before v22,
// so this file brings a small one (what a browser does: the Origin header, named events,
// lastEventId, reconnecting after `retry:` with Last-Event-ID, CLOSED on a non-200 answer).
// Prints one JSON line per thing the page hears.
//
// node kioskd-js-client.mjs KIOSKD_JS BRIDGE_URL ORIGIN APP
import http from "node:http";

const [scriptPath, bridge, origin, app] = process.argv.slice(2);
if (typeof globalThis.CustomEvent !== "function") {
  globalThis.CustomEvent = class CustomEvent extends Event {
    constructor(type, init = {}) { super(type); this.detail = init.detail; }
  };
}
const say = (what) => console.log(JSON.stringify(what));

class EventSource extends EventTarget {
  static CONNECTING = 0; static OPEN = 1; static CLOSED = 2;
  readyState = 0;
  #url; #lastEventId = ""; #retry = 3000; #request = null;
  constructor(url) { super(); this.#url = url; this.#connect(); }
  close() { this.readyState = 2; this.#request?.destroy(); }
  #connect() {
    const headers = { Origin: origin, Accept: "text/event-stream" };
    if (this.#lastEventId) headers["Last-Event-ID"] = this.#lastEventId;
    this.#request = http.get(this.#url, { headers }, (response) => {
      if (response.statusCode !== 200) {
        this.readyState = 2;
        response.resume();
        this.dispatchEvent(new Event("error"));
        return;
      }
      this.readyState = 1;
      this.dispatchEvent(new Event("open"));
      let buffer = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          this.#dispatch(block);
        }
      });
      response.on("end", () => this.#lost());
      response.on("error", () => this.#lost());
    });
    this.#request.on("error", () => this.#lost());
  }
  #dispatch(block) {
    let type = "message", data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") type = value;
      else if (field === "data") data.push(value);
      else if (field === "id") this.#lastEventId = value;
      else if (field === "retry" && /^\d+$/.test(value)) this.#retry = Number(value);
    }
    if (data.length === 0) return;
    const event = new Event(type);
    event.data = data.join("\n");
    event.lastEventId = this.#lastEventId;
    this.dispatchEvent(event);
  }
  #lost() {
    if (this.readyState === 2) return;
    this.readyState = 0;
    this.dispatchEvent(new Event("error"));
    setTimeout(() => { if (this.readyState !== 2) this.#connect(); }, this.#retry);
  }
}

const { KioskRestrictions } = await import(scriptPath);
try {
  const kiosk = await KioskRestrictions.connect(app, { bridge, EventSource });
  say({ ready: kiosk.restrictions.map(({ id, state }) => ({ id, state })) });
  kiosk.addEventListener("change", (e) => say({ change: e.detail }));
  kiosk.addEventListener("connection", (e) => say({ connected: e.detail.connected }));
} catch (error) {
  say({ refused: String(error.message) });
  process.exit(0);
}
