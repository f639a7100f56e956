/** Jest's globalSetup: what is under the machine's own node paths before the tests (paths.js). */
const { listing } = require("./paths");

module.exports = async function setup() {
  globalThis.__pkHostPaths = listing();
};
