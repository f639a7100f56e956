/**
 * The machine's own node paths, which no test may change: /etc/kubernetes, /var/lib/kubelet,
 * /var/lib/etcd and /var/lib/pulumi-kubeadm (what the node scripts and lib.sh write on a node). Unit tests
 * run node scripts in a sandbox with those paths rewritten in the script and in the library alike
 * (test/unit/scripts/bash.ts, `sandboxed`); the lab's nodes bind-mount folders of their own over them in
 * their own mount namespaces, so on the host they stay the empty mount points the lab makes. Jest's
 * globalSetup (setup.js) lists what is under them, its globalTeardown (teardown.js) lists it again and
 * fails the run, naming what a test added, changed or removed.
 */
const fs = require("fs");
const path = require("path");

/** The paths watched. */
const ROOTS = ["/etc/kubernetes", "/var/lib/kubelet", "/var/lib/etcd", "/var/lib/pulumi-kubeadm"];

/** Every entry under the roots (not the roots themselves, which the lab may make): path -> `<type> <size> <mtime ms>`. */
function listing() {
  const out = {};
  const walk = (dir) => {
    let names;
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const p = path.join(dir, name);
      const st = fs.lstatSync(p);
      out[p] = `${st.isDirectory() ? "dir" : "file"} ${st.isDirectory() ? 0 : st.size} ${Math.round(st.mtimeMs)}`;
      if (st.isDirectory()) walk(p);
    }
  };
  for (const root of ROOTS) walk(root);
  return out;
}

/** What differs between two listings, one line per path (`added`, `removed`, `changed`). */
function differences(before, after) {
  const lines = [];
  for (const p of Object.keys(after)) if (!(p in before)) lines.push(`added ${p}`);
  for (const p of Object.keys(before)) if (!(p in after)) lines.push(`removed ${p}`);
  for (const p of Object.keys(after)) if (p in before && before[p] !== after[p]) lines.push(`changed ${p}`);
  return lines.sort();
}

module.exports = { ROOTS, listing, differences };
