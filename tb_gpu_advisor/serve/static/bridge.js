// TensorBoard's iframe message protocol (components/experimental/plugin_lib):
// the guest posts "experimental.bootstrap" with a MessagePort to its parent;
// both sides then exchange JSON strings {type, id, payload, error, isReply}.
// Used for DataReloaded (the only reload signal an iframe gets) and
// GetURLPluginData (the `p.gpu_advisor.*` hash keys). Outside TensorBoard
// (no parent, or no answer) everything degrades to "no data, no reloads".

const PLUGIN = "gpu_advisor";
const URL_PREFIX = `p.${PLUGIN}.`;

export class Bridge {
  constructor(win = window, timeoutMs = 1500) {
    this._listeners = new Map();
    this._waits = new Map();
    this._id = 0;
    this._timeoutMs = timeoutMs;
    this._win = win;
    this._port = null;
    if (!win.parent || win.parent === win) return;
    const channel = new MessageChannel();
    this._port = channel.port1;
    this._port.addEventListener("message", (e) => this._onMessage(e));
    this._port.start();
    win.parent.postMessage("experimental.bootstrap", "*", [channel.port2]);
  }

  /** Calls `fn(payload)` whenever TensorBoard sends `type` (e.g. experimental.DataReloaded). */
  listen(type, fn) {
    this._listeners.set(type, fn);
  }

  /** Sends a request; resolves with the reply payload, or null on timeout/no parent. */
  send(type, payload) {
    if (!this._port) return Promise.resolve(null);
    const id = this._id++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this._waits.delete(id);
        resolve(null);
      }, this._timeoutMs);
      this._waits.set(id, (value) => {
        clearTimeout(timer);
        resolve(value);
      });
      this._post({ type, id, payload, error: null, isReply: false });
    });
  }

  /** The `p.gpu_advisor.*` hash keys of the TensorBoard page, prefix stripped ({} if unavailable). */
  async getUrlData() {
    const data = await this.send("experimental.GetURLPluginData", { pluginName: PLUGIN });
    return data && typeof data === "object" ? data : {};
  }

  _post(message) {
    this._port.postMessage(JSON.stringify(message));
  }

  async _onMessage(event) {
    let msg;
    try {
      msg = JSON.parse(event.data);
    } catch {
      return;
    }
    if (msg.isReply) {
      const wait = this._waits.get(msg.id);
      if (wait) {
        this._waits.delete(msg.id);
        wait(msg.error ? null : msg.payload);
      }
      return;
    }
    let payload = null;
    let error = null;
    const fn = this._listeners.get(msg.type);
    try {
      if (fn) payload = (await fn(msg.payload)) ?? null;
    } catch (e) {
      error = String(e);
    }
    this._post({ type: msg.type, id: msg.id, payload, error, isReply: true });
  }
}

/**
 * Writes the selection into the TensorBoard page's hash as p.gpu_advisor.* keys
 * so the address bar is a shareable link. TensorBoard has no "set URL data"
 * message; the entry iframe is same-origin, so the parent's history is updated
 * in place (replaceState: no navigation, no hashchange). Silently does nothing
 * when the parent is not reachable.
 */
export function writeUrlData(selection, win = window) {
  try {
    const top = win.parent;
    if (!top || top === win) return false;
    const hash = top.location.hash.replace(/^#/, "");
    const kept = hash.split("&").filter((part) => part && !decodeURIComponent(part.split("=")[0]).startsWith(URL_PREFIX));
    for (const [key, value] of Object.entries(selection)) {
      if (value) kept.push(`${encodeURIComponent(URL_PREFIX + key)}=${encodeURIComponent(value)}`);
    }
    top.history.replaceState(top.history.state, "", `#${kept.join("&")}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads the p.gpu_advisor.* keys straight from the TensorBoard page's hash.
 * Fallback for experimental.GetURLPluginData, which in TensorBoard 2.21 answers
 * from the dashboard's own stored state and returns {} for keys a shared link
 * carries. Returns {} when the parent is not reachable.
 */
export function readUrlData(win = window) {
  const out = {};
  try {
    const top = win.parent;
    if (!top || top === win) return out;
    for (const part of top.location.hash.replace(/^#/, "").split("&")) {
      const [rawKey, rawValue] = part.split("=");
      if (rawValue === undefined) continue;
      const key = decodeURIComponent(rawKey);
      if (key.startsWith(URL_PREFIX)) out[key.slice(URL_PREFIX.length)] = decodeURIComponent(rawValue);
    }
  } catch {
    // cross-origin parent: no URL state
  }
  return out;
}
