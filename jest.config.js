/** Jest runs TypeScript through ts-jest; lab tests are slower and share the lab, so run in band. */
module.exports = {
  preset: "ts-jest",
  testEnvironment: "node",
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", {}] },
  testTimeout: 60000,
};
