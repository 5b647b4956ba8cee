// Number formatting and the breakdown categories' names and order.

export const CATEGORIES = [
  ["device_compute", "Device compute"],
  ["launch_wait", "Waiting for kernel launch"],
  ["input_wait", "Waiting for input"],
  ["host_compute", "Host compute"],
  ["memcpy_h2d", "Copy host→device"],
  ["memcpy_d2h", "Copy device→host"],
  ["memcpy_d2d", "Copy device→device"],
  ["collectives", "Collectives (AllReduce…)"],
  ["other", "Other / idle"],
];

export function ms(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  if (Math.abs(value) >= 100) return `${value.toFixed(0)} ms`;
  if (Math.abs(value) >= 1) return `${value.toFixed(1)} ms`;
  return `${(value * 1000).toFixed(0)} µs`;
}

export function pct(share) {
  if (share === null || share === undefined || !Number.isFinite(share)) return "–";
  return `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;
}

/** A table cell: numbers get a fixed, readable precision; everything else is text. */
export function cell(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") {
    if (Number.isInteger(value)) return value.toLocaleString("en-US");
    return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(3);
  }
  return String(value);
}

/** "12.4 ms/step (31%)" for a Saving. */
export function saving(s) {
  if (!s) return "";
  // percent_of_step is in percent (rules/base.py), unlike shares (fractions)
  return `${ms(s.ms_per_step)}/step (${pct(s.percent_of_step / 100)} of the step)`;
}
