// A jsdom window as the global environment, so the shipped ES modules
// (which use document/window directly) run unchanged under `node --test`.
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!DOCTYPE html><html><head></head><body></body></html>", {
  url: "http://localhost:6006/prefix/data/plugin/gpu_advisor/",
});
globalThis.window = dom.window;
globalThis.document = dom.window.document;

export const STATIC = new URL("../../tb_gpu_advisor/serve/static/", import.meta.url);
export const fixture = () => JSON.parse(readFileSync(new URL("./fixtures/report.json", import.meta.url), "utf8"));
export const HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>';
/** What /runs serves as `legend` (report/legend.py; python -m tests.support.plugin_fixtures writes it). */
export const legend = () => JSON.parse(readFileSync(new URL("./fixtures/legend.json", import.meta.url), "utf8"));
