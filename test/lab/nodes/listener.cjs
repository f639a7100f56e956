// One node's container runtime sockets: real listening unix sockets that accept and close
// (nothing speaks CRI on them). Runs inside the node's mount namespace and holds it open.
// usage: node listener.cjs <ready file> [socket path ...]
"use strict";
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");

const [readyFile, ...sockets] = process.argv.slice(2);
const servers = [];
let pending = sockets.length;

function ready() {
  fs.writeFileSync(readyFile, `${process.pid}\n`);
}

for (const sock of sockets) {
  fs.mkdirSync(path.dirname(sock), { recursive: true });
  fs.rmSync(sock, { force: true });
  const server = net.createServer((conn) => conn.end());
  server.on("error", (err) => {
    process.stderr.write(`listener: ${sock}: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(sock, () => {
    if (--pending === 0) ready();
  });
  servers.push(server);
}
if (sockets.length === 0) ready();

function stop() {
  for (const s of servers) s.close();
  for (const sock of sockets) fs.rmSync(sock, { force: true });
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// no stdin, no timers: the listening servers (or this interval, with none) keep the process alive
setInterval(() => {}, 1 << 30);
