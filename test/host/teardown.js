/**
 * Jest's globalTeardown: fails the run when a test added, changed or removed anything under the
 * machine's own node paths (paths.js), naming each path.
 * @throws Error listing the differences.
 */
const { differences, listing } = require("./paths");

module.exports = async function teardown() {
  const found = differences(globalThis.__pkHostPaths ?? {}, listing());
  if (found.length > 0) {
    throw new Error(`a test wrote on this machine's own node paths (a node script or lib.sh not sandboxed: test/unit/scripts/bash.ts, sandboxed):\n${found.join("\n")}`);
  }
};
