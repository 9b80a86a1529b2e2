// kioskd.js: a web page's view of the restriction states kioskd holds for its app, through
// kioskd-bridge (docs/browsers.md § The bridge). Licence Apache-2.0.
//
//   import { KioskRestrictions } from "http://127.0.0.1:7770/kioskd.js";
//   const kiosk = await KioskRestrictions.connect("org.example.MuseumGuide");
//   video.hidden = kiosk.state("org.example.MuseumGuide.video") !== "allow";
//   kiosk.addEventListener("change", (e) => { … e.detail.id, e.detail.state … });
//
// Like KioskClient's delegate: each change is reported once, in order, and a change made while
// the page, the bridge or kioskd was away is reported as a change when the page hears of it;
// the first states are not changes. A state is "allow", "deny", or null while kioskd has not
// said (treat null as "deny").

/** Where the bridge listens (BridgeWire.port). */
export const BRIDGE = "http://127.0.0.1:7770";

/** The restriction states of one web app, kept current; an EventTarget of "change" and
 * "connection" events. */
export class KioskRestrictions extends EventTarget {
  #app;
  #url;
  #EventSource;
  #source = null;
  #restrictions = [];
  #states = new Map();
  #lastEventId = null;
  #connected = false;
  #closed = false;
  #retryTimer = null;
  #ready;

  /** Connects to the bridge and resolves once the app's states are known. Options: `bridge`
   * (the bridge's URL) and `EventSource` (a constructor, for runtimes without one). */
  static async connect(app, { bridge = BRIDGE, EventSource = globalThis.EventSource } = {}) {
    const kiosk = new KioskRestrictions(app, bridge, EventSource);
    await kiosk.#ready;
    return kiosk;
  }

  constructor(app, bridge, EventSourceClass) {
    super();
    if (typeof EventSourceClass !== "function") throw new TypeError("kioskd.js needs EventSource");
    this.#app = app;
    this.#url = `${bridge}/v1/apps/${encodeURIComponent(app)}/events`;
    this.#EventSource = EventSourceClass;
    this.#ready = new Promise((resolve, reject) => {
      this.#open(resolve, reject);
    });
  }

  /** The app id. */
  get app() { return this.#app; }

  /** Whether the stream is open now (the states are kept while it is not). */
  get connected() { return this.#connected; }

  /** A restriction's state: "allow", "deny", or null (unknown: treat it as "deny"). */
  state(id) { return this.#states.has(id) ? this.#states.get(id) : null; }

  /** Every restriction of the app's manifest, in its order: { id, title, detail, state }. */
  get restrictions() {
    return this.#restrictions.map((r) => ({ ...r, state: this.state(r.id) }));
  }

  /** Stops listening; no more events. */
  close() {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#source?.close();
    this.#source = null;
    this.#setConnected(false);
  }

  #open(resolve, reject) {
    // A new EventSource sends no Last-Event-ID: the query carries it (the bridge reads both).
    const url = this.#lastEventId === null ? this.#url : `${this.#url}?last-event-id=${encodeURIComponent(this.#lastEventId)}`;
    const source = new this.#EventSource(url);
    this.#source = source;
    let first = true;
    const settle = () => {
      if (first) { first = false; resolve?.(); }
      this.#setConnected(true);
    };
    source.addEventListener("open", () => this.#setConnected(true));
    source.addEventListener("snapshot", (e) => {
      this.#snapshot(JSON.parse(e.data));
      this.#lastEventId = e.lastEventId;
      settle();
    });
    source.addEventListener("change", (e) => {
      const data = JSON.parse(e.data);
      this.#note(data.restriction, data.state);
      this.#lastEventId = e.lastEventId;
      settle();
    });
    source.addEventListener("error", () => {
      this.#setConnected(false);
      if (source.readyState === 2 /* CLOSED: the bridge refused; EventSource will not retry */) {
        if (first && this.#lastEventId === null) {
          first = false;
          reject?.(new Error(`kioskd-bridge refused the stream of ${this.#app}`));
          return;
        }
        if (!this.#closed) this.#retryTimer = setTimeout(() => this.#open(settle, null), 1000);
      }
    });
  }

  #snapshot(data) {
    const firstTime = this.#restrictions.length === 0;
    this.#restrictions = data.restrictions.map(({ id, title, detail }) => ({ id, title, detail }));
    for (const r of data.restrictions) {
      if (firstTime) this.#states.set(r.id, r.state);
      else this.#note(r.id, r.state);
    }
  }

  #note(id, state) {
    if (this.#states.has(id) && this.#states.get(id) === state) return; // seen already
    const previous = this.state(id);
    this.#states.set(id, state);
    this.dispatchEvent(new CustomEvent("change", { detail: { id, state, previous } }));
  }

  #setConnected(connected) {
    if (this.#connected === connected) return;
    this.#connected = connected;
    this.dispatchEvent(new CustomEvent("connection", { detail: { connected } }));
  }
}
