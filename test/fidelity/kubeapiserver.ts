/**
 * A real Kubernetes API for real kubeadm in the fidelity test: Debian's etcd and a kube-apiserver built
 * from the k8s.io/kubernetes Go module (tools/build-kubeadm.sh --component kube-apiserver), both on
 * 127.0.0.1 with free ports, data and certificates in a throwaway folder. Serving certificate:
 * self-signed for 127.0.0.1 (kubeconfigs skip verification); users: static tokens (a node user in
 * system:nodes, an admin in system:masters); authorization AlwaysAllow; an audit log (Metadata level)
 * records every request, so a run can show what real kubeadm asked for.
 * One API serves all cases; cases that use it take turns ({@link RealApi.exclusive}).
 */
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as net from "node:net";
import * as path from "node:path";

/** The kube-apiserver version that serves every case (one minor is enough: kubeadm's calls are stable). */
export const KUBE_APISERVER_VERSION = "v1.36.3";

/** The static tokens and their users. */
export const NODE_TOKEN = "fidelity-node";
export const ADMIN_TOKEN = "fidelity-admin";

type Obj = Record<string, unknown>;

/** A running API. */
export interface RealApi {
  url: string;
  /** a request as the admin; resolves with status and parsed body */
  request(method: string, apiPath: string, body?: unknown): Promise<{ code: number; body: Obj }>;
  /** runs `work` while no other case uses the API (cases share the Node and the ConfigMaps) */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** `VERB requestURI` of the requests `user` made since `mark` (an earlier {@link auditMark}) */
  requestsSince(mark: number, user: string): string[];
  /** where the audit log ends now */
  auditMark(): number;
  /** versions, for the report */
  versions: { etcd: string; kubeApiserver: string };
  stop(): Promise<void>;
}

/** `n` distinct free ports on 127.0.0.1: all held open at once, then released together. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<net.Server>((resolve, reject) => {
      const s = net.createServer();
      s.on("error", reject);
      s.listen(0, "127.0.0.1", () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function httpsRequest(url: string, method: string, token: string, body?: unknown): Promise<{ code: number; body: Obj; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(
      url,
      {
        method,
        rejectUnauthorized: false,
        headers: { Authorization: `Bearer ${token}`, Accept: "application/json", ...(data ? { "Content-Type": "application/json" } : {}) },
        timeout: 20000,
      },
      (res) => {
        let text = "";
        res.on("data", (b: Buffer) => (text += b.toString("utf8")));
        res.on("end", () => {
          let parsed: Obj = {};
          try {
            parsed = JSON.parse(text) as Obj;
          } catch {
            parsed = { text };
          }
          resolve({ code: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`${method} ${url}: timed out`)));
    if (data) req.write(data);
    req.end();
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill("SIGKILL"), 10000);
    child.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Starts etcd (`etcd` on PATH) and `kubeApiserver` under `dir`; rejects, with the logs' tails, if the API is
 * not ready within a minute. The ports are picked free and then released, so another process may take one
 * before etcd or the API server binds it: a start that failed on `address already in use` is tried again
 * on new ports, three times at most.
 * @param pickPorts the etcd client, etcd peer and API ports of an attempt (default: three free ones).
 */
export async function startRealApi(dir: string, kubeApiserver: string, pickPorts: () => Promise<number[]> = () => freePorts(3)): Promise<RealApi> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRealApiOnce(dir, kubeApiserver, await pickPorts());
    } catch (e) {
      if (attempt >= 3 || !/address already in use/.test(String(e))) throw e;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

async function startRealApiOnce(dir: string, kubeApiserver: string, [etcdClient, etcdPeer, apiPort]: number[]): Promise<RealApi> {
  fs.mkdirSync(dir, { recursive: true });
  const pki = path.join(dir, "pki");
  fs.mkdirSync(pki, { recursive: true });
  const ossl = (...args: string[]) => execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
  ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=fidelity-apiserver",
    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", path.join(pki, "serving.key"), "-out", path.join(pki, "serving.crt"));
  ossl("genrsa", "-out", path.join(pki, "sa.key"), "2048");
  ossl("rsa", "-in", path.join(pki, "sa.key"), "-pubout", "-out", path.join(pki, "sa.pub"));
  fs.writeFileSync(path.join(dir, "tokens.csv"), `${NODE_TOKEN},system:node:node-1,node-1,"system:nodes"\n${ADMIN_TOKEN},kubernetes-admin,admin,"system:masters"\n`);
  const audit = path.join(dir, "audit.log");
  fs.writeFileSync(path.join(dir, "audit-policy.yaml"), "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n");

  const etcdLog = fs.openSync(path.join(dir, "etcd.log"), "w");
  const etcd = spawn("etcd", [
    "--name", "fidelity", "--data-dir", path.join(dir, "etcd"),
    "--listen-client-urls", `http://127.0.0.1:${etcdClient}`, "--advertise-client-urls", `http://127.0.0.1:${etcdClient}`,
    "--listen-peer-urls", `http://127.0.0.1:${etcdPeer}`, "--initial-advertise-peer-urls", `http://127.0.0.1:${etcdPeer}`,
    "--initial-cluster", `fidelity=http://127.0.0.1:${etcdPeer}`, "--listen-metrics-urls", "",
  ], { stdio: ["ignore", etcdLog, etcdLog] });
  const apiLog = fs.openSync(path.join(dir, "kube-apiserver.log"), "w");
  const api = spawn(kubeApiserver, [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", `--secure-port=${apiPort}`,
    `--tls-cert-file=${path.join(pki, "serving.crt")}`, `--tls-private-key-file=${path.join(pki, "serving.key")}`,
    `--cert-dir=${pki}`,
    `--service-account-key-file=${path.join(pki, "sa.pub")}`, `--service-account-signing-key-file=${path.join(pki, "sa.key")}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--token-auth-file=${path.join(dir, "tokens.csv")}`, "--anonymous-auth=false",
    "--authorization-mode=AlwaysAllow",
    "--service-cluster-ip-range=10.96.0.0/12",
    `--audit-policy-file=${path.join(dir, "audit-policy.yaml")}`, `--audit-log-path=${audit}`, "--audit-log-format=json", "--audit-log-mode=blocking",
  ], { stdio: ["ignore", apiLog, apiLog] });
  const children = [api, etcd];
  const stop = async (): Promise<void> => {
    for (const c of children) await stopChild(c);
    fs.closeSync(etcdLog);
    fs.closeSync(apiLog);
  };
  const url = `https://127.0.0.1:${apiPort}`;
  const tail = (f: string) => fs.readFileSync(path.join(dir, f), "utf8").trim().split("\n").slice(-8).join("\n");
  const deadline = Date.now() + 60000;
  for (;;) {
    if (api.exitCode !== null || etcd.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the fidelity API did not become ready (kube-apiserver exit ${api.exitCode}, etcd exit ${etcd.exitCode}):\n--- etcd.log\n${tail("etcd.log")}\n--- kube-apiserver.log\n${tail("kube-apiserver.log")}`);
    }
    try {
      const r = await httpsRequest(`${url}/readyz`, "GET", ADMIN_TOKEN);
      if (r.code === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(300);
  }
  const version = await httpsRequest(`${url}/version`, "GET", ADMIN_TOKEN);
  const etcdVersion = execFileSync("etcd", ["--version"], { encoding: "utf8" }).split("\n")[0].replace(/^etcd Version: /, "");
  let queue: Promise<unknown> = Promise.resolve();
  return {
    url,
    versions: { etcd: etcdVersion, kubeApiserver: String(version.body.gitVersion) },
    request: async (method, apiPath, body) => {
      const r = await httpsRequest(`${url}${apiPath}`, method, ADMIN_TOKEN, body);
      return { code: r.code, body: r.body };
    },
    exclusive<T>(work: () => Promise<T>): Promise<T> {
      const run = queue.then(work, work);
      queue = run.catch(() => undefined);
      return run;
    },
    auditMark: () => (fs.existsSync(audit) ? fs.statSync(audit).size : 0),
    requestsSince(mark, user) {
      if (!fs.existsSync(audit)) return [];
      const fd = fs.openSync(audit, "r");
      try {
        const size = fs.fstatSync(fd).size;
        const buf = Buffer.alloc(Math.max(0, size - mark));
        fs.readSync(fd, buf, 0, buf.length, mark);
        return buf
          .toString("utf8")
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as { verb: string; requestURI: string; user?: { username?: string } })
          .filter((e) => e.user?.username === user)
          .map((e) => `${e.verb} ${e.requestURI.split("?")[0]}`);
      } finally {
        fs.closeSync(fd);
      }
    },
    stop,
  };
}

/** A kubeconfig for the API: a token user; the self-signed serving certificate is not verified. */
export function realKubeconfig(url: string, user: string, token: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- cluster:",
    `    server: ${url}`,
    "    insecure-skip-tls-verify: true",
    "  name: kubernetes",
    "contexts:",
    "- context:",
    "    cluster: kubernetes",
    `    user: ${user}`,
    `  name: ${user}@kubernetes`,
    `current-context: ${user}@kubernetes`,
    "users:",
    `- name: ${user}`,
    "  user:",
    `    token: ${token}`,
    "",
  ].join("\n");
}

/** Replaces an object: deletes it (if there) and creates `obj` at `collection`. */
export async function replaceObject(api: RealApi, collection: string, name: string, obj: Obj): Promise<void> {
  const del = await api.request("DELETE", `${collection}/${name}`);
  if (del.code !== 200 && del.code !== 404) throw new Error(`DELETE ${collection}/${name}: ${del.code} ${JSON.stringify(del.body)}`);
  for (let i = 0; ; i++) {
    const r = await api.request("POST", collection, obj);
    if (r.code === 201) return;
    // the API creates kube-system shortly after it is ready; a deleted object may linger a moment
    if (i < 50 && (r.code === 404 || r.code === 409)) {
      await sleep(200);
      continue;
    }
    throw new Error(`POST ${collection} (${name}): ${r.code} ${JSON.stringify(r.body)}`);
  }
}
