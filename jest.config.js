/**
 * Jest runs TypeScript through ts-jest, in two workers: an e2e file keeps about one core busy (the
 * engine, sshd, the stand-ins), so two at once use a 2-core machine's second core. Each worker's e2e
 * files get a lab of their own (test/lab/e2e/helpers.ts: folder and addresses by JEST_WORKER_ID).
 */
module.exports = {
  preset: "ts-jest",
  testEnvironment: "node",
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", {}] },
  testTimeout: 60000,
  maxWorkers: 2,
  // No test may change the machine's own /etc/kubernetes, /var/lib/kubelet, ... (test/host/paths.js).
  globalSetup: "<rootDir>/test/host/setup.js",
  globalTeardown: "<rootDir>/test/host/teardown.js",
};
