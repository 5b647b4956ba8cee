// Number formatting. What the numbers are (the breakdown's categories, their names and order) comes from the
// server: /runs' `legend` (report/legend.py), never a list kept here.

export const isNum = (v) => typeof v === "number" && Number.isFinite(v);

/** The legend in the words of a report's GPU vendor: /runs' `legend.vendors[capture.vendor]` over its defaults
 * (an AMD report's allocator is "hipMalloc / hipFree"); a report that names no vendor keeps the defaults. */
export function legendFor(legend, report) {
  const vendor = (report?.hosts || []).map((x) => x.capture?.vendor).find(Boolean);
  return { ...(legend || {}), ...(((legend || {}).vendors || {})[vendor] || {}) };
}

/**
 * `x` with `digits` decimals as Python's format writes it (common/fmt: f"{x:.2f}"), where JavaScript's toFixed differs:
 * both round the value's exact binary expansion, but a tie (10.25 to one decimal, 2.125 to two: exact in binary) goes
 * up in toFixed and to the even digit in Python ("10.3" beside the CLI's "10.2").  Every number format.js writes goes
 * through here, so the tab's report reads as the CLI's to the last digit.
 */
export function fixed(x, digits) {
  const out = x.toFixed(digits);
  const a = Math.abs(x);
  if (!(a >= 5e-4 && a < 1e21) || digits > 20) return out; // below 0.0005 no tie at up to 3 decimals; toFixed's range
  const exact = a.toFixed(100); // the binary value's whole decimal expansion (every double of this range fits)
  const point = exact.indexOf(".");
  const tail = exact.slice(point + 1 + digits).replace(/0+$/, "");
  if (tail !== "5") return out; // no tie: toFixed and Python agree
  const kept = exact.slice(0, digits ? point + 1 + digits : point);
  if (Number(kept[kept.length - 1]) % 2 === 1) return out; // rounding up makes the digit even: as Python does
  return `${x < 0 ? "-" : ""}${kept}`; // the kept digit is even: Python leaves it, toFixed went up
}

/** At most 3 significant digits, no trailing zeros ("0.8", "12.4", "425"). */
export function num(value) {
  if (!isNum(value)) return "–";
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString("en-US");
  return String(Number(value.toPrecision(3)));
}

/**
 * A duration given in ms, written as the CLI writes it (common/fmt.ms: 3 significant digits, "1.23 s", "12.3 ms",
 * "1.23 ms", "456 µs"; frontend/test/fixtures/format.json holds the CLI's own), so one value reads the same on the
 * tab as in the server's prose beside it and in the CLI's report (was "116 ms" under a verdict saying "116.5 ms").
 * Microseconds in the tab's unit style, "µs" (dom.units).
 */
export function ms(value) {
  if (!isNum(value)) return "–";
  const a = Math.abs(value);
  if (a >= 1000) return `${fixed(value / 1000, 2)} s`;
  if (a >= 10) return `${fixed(value, 1)} ms`;
  if (a >= 0.995) return `${fixed(value, 2)} ms`;
  return `${fixed(value * 1000, 0)} µs`;
}

export function pct(share) {
  if (!isNum(share)) return "–";
  return `${fixed(share * 100, share < 0.1 ? 1 : 0)}%`;
}

/** Bytes in decimal units, as the report's "MB/step" columns: "1.05 MB". */
export function bytes(value) {
  if (!isNum(value)) return "–";
  const units = [["GB", 1e9], ["MB", 1e6], ["kB", 1e3]];
  for (const [unit, scale] of units) if (Math.abs(value) >= scale) return `${num(value / scale)} ${unit}`;
  return `${num(value)} B`;
}

/** Bytes in binary units, as the memory findings and the CLI write them (common/fmt.gb: 3 significant digits,
 * "1.95 GiB", "44.0 GiB", "512 MiB"; was "44 GiB" beside the CLI's "44.0 GiB"). */
export function gib(value) {
  if (!isNum(value)) return "–";
  for (const [unit, scale] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["kiB", 2 ** 10]]) {
    if (Math.abs(value) >= scale * 0.995) {
      const v = value / scale, a = Math.abs(v);
      return `${fixed(v, a < 10 ? 2 : a < 100 ? 1 : 0)} ${unit}`;
    }
  }
  return `${Math.trunc(value)} B`;
}

/** A table cell with no column context: numbers get a readable precision; everything else is text. */
export function cell(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number") return Number.isInteger(value) ? value.toLocaleString("en-US") : num(value);
  return String(value);
}

const SHARE_COLUMN = /\bshare\b/i;
const MS_COLUMN = /(^|[\s(])ms(\/step)?\)?$/i;
const BYTES_COLUMN = /(^|\s)bytes(\/step)?$/i;

/**
 * How to show one column of a report table (report_schema.Table): the report
 * carries plain numbers and unit-named columns ("busy share", "total ms",
 * "bytes/step"), so shares become percentages, byte counts get units, and a
 * millisecond column whose values are all below 1 ms is shown in µs (its
 * header says so). Returns {title, format(value)}.
 */
export function columnFormat(title, values = []) {
  const nums = values.filter(isNum);
  if (SHARE_COLUMN.test(title) && nums.every((v) => v >= 0 && v <= 1.5)) {
    return { title, format: (v) => (isNum(v) ? pct(v) : cell(v)) };
  }
  if (BYTES_COLUMN.test(title)) return { title, format: (v) => (isNum(v) ? bytes(v) : cell(v)) };
  if (MS_COLUMN.test(title) && nums.some((v) => v !== 0) && nums.every((v) => Math.abs(v) < 1)) {
    return { title: title.replace(/ms(\/step)?(\)?)$/i, "µs$1$2"), format: (v) => (isNum(v) ? num(v * 1000) : cell(v)) };
  }
  return { title, format: cell };
}

/**
 * What a finding saves, in the CLI's words (render._saving_text): "12.4 ms/step (31% of step)", or, where its host
 * kept one step (`one`: report/verdict.one_step), "4.62 ms (4% of the step)" -- the finding's own prose says "of the
 * 116.5 ms step" then, never "/step".  A share under the server's floor (`floor`, a fraction: /runs' legend
 * `min_saving_share`) is "<0.5%".  Without the "saves ~" the CLI puts first.
 */
export function saving(s, { one = false, floor = null } = {}) {
  if (!s) return "";
  if (!(s.ms_per_step > 0)) return one ? "0 ms" : "0 ms/step";
  // percent_of_step is in percent (rules/base.py), unlike shares (fractions)
  const cut = isNum(floor) ? 100 * floor : null;
  const share = cut !== null && s.percent_of_step < cut ? `<${Number(cut.toPrecision(6))}%` : `${fixed(s.percent_of_step, 0)}%`;
  return one ? `${ms(s.ms_per_step)} (${share} of the step)` : `${ms(s.ms_per_step)}/step (${share} of step)`;
}

/**
 * A file name of the export: every name in it whole up to 180 characters (a diff names two runs and sessions; cut at
 * 80 it lost the new side, issue #36); past that its start and end, so both sides stay told apart.
 */
export function safeName(text, limit = 180) {
  const name = String(text).replace(/[^A-Za-z0-9._-]+/g, "_");
  return name.length <= limit ? name : `${name.slice(0, limit / 2)}_${name.slice(-(limit / 2 - 1))}`;
}
