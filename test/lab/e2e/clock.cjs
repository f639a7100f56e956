/**
 * The lab's clock in a Pulumi program's process: `node --require clock.cjs ...` shifts `Date` (Date.now()
 * and `new Date()` with no argument) by `clockOffsetSeconds` of `$LAB_DIR/config.json`, read once at
 * start, the same offset the stand-ins add wherever they read the time. A test moves the lab's clock
 * (token and certificate-key lifetimes, the component's join-material window) instead of sleeping past
 * a real lifetime. No offset, or no LAB_DIR: Date is left alone.
 */
"use strict";
const fs = require("fs");
const path = require("path");

function offsetMs() {
  const dir = process.env.LAB_DIR;
  if (!dir) return 0;
  try {
    const s = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8")).clockOffsetSeconds;
    return typeof s === "number" && Number.isFinite(s) ? s * 1000 : 0;
  } catch {
    return 0;
  }
}

const shift = offsetMs();
if (shift !== 0) {
  const RealDate = Date;
  // A function, not a class: `Date()` without `new` (a string of the time) must keep working.
  function LabDate(...args) {
    const d = args.length === 0 ? new RealDate(RealDate.now() + shift) : new RealDate(...args);
    return new.target ? d : d.toString();
  }
  LabDate.prototype = RealDate.prototype;
  LabDate.now = () => RealDate.now() + shift;
  LabDate.parse = RealDate.parse;
  LabDate.UTC = RealDate.UTC;
  globalThis.Date = LabDate;
}
