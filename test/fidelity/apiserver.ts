/**
 * A minimal Kubernetes API for real kubeadm's `upgrade node` in the fidelity test: plain HTTP on
 * 127.0.0.1, no authentication, and only what a worker's upgrade asks for: ConfigMaps and Nodes (get,
 * strategic-merge/merge patch, update), and SelfSubjectReview (answering `system:node:<name>`). Any
 * other request gets a 404 Status and is recorded, so a run shows what it asked for. It is not what
 * the test compares (both sides get the same cluster state); it only lets real kubeadm run here.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

type Obj = Record<string, unknown>;

/** The objects the API serves. */
export interface ApiState {
  /** `namespace/name` -> ConfigMap */
  configMaps: Record<string, Obj>;
  /** name -> Node */
  nodes: Record<string, Obj>;
  /** the user a SelfSubjectReview reports */
  user: string;
}

/** A running API: its URL, its live state, the requests it saw, and stop(). */
export interface FakeApi {
  url: string;
  state: ApiState;
  /** `METHOD path` of every request, in order; unknown ones end in ` (404)` */
  requests: string[];
  stop(): Promise<void>;
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** JSON merge patch (RFC 7386); for maps such as annotations a strategic merge patch does the same. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return patch;
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$")) continue; // strategic-merge directives ($patch, $retainKeys) are not needed here
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function status(code: number, reason: string, message: string): Obj {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}

/** Starts the API on 127.0.0.1 with a free port. */
export function startFakeApi(state: ApiState): Promise<FakeApi> {
  const requests: string[] = [];
  let revision = 1000;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (b: Buffer) => (body += b.toString("utf8")));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0];
      const method = req.method ?? "GET";
      const send = (code: number, obj: Obj) => {
        if (code === 404) requests.push(`${method} ${path} (404)`);
        else requests.push(`${method} ${path}`);
        res.writeHead(code, { "Content-Type": "application/json" });
        res.end(JSON.stringify(obj));
      };
      let m: RegExpExecArray | null;
      if (method === "POST" && path === "/apis/authentication.k8s.io/v1/selfsubjectreviews") {
        return send(201, {
          apiVersion: "authentication.k8s.io/v1",
          kind: "SelfSubjectReview",
          metadata: {},
          status: { userInfo: { username: state.user, groups: ["system:nodes", "system:authenticated"] } },
        });
      }
      const store =
        (m = /^\/api\/v1\/namespaces\/([^/]+)\/configmaps\/([^/]+)$/.exec(path)) !== null
          ? { map: state.configMaps, key: `${m[1]}/${m[2]}`, kind: "configmaps", name: m[2] }
          : (m = /^\/api\/v1\/nodes\/([^/]+)$/.exec(path)) !== null
            ? { map: state.nodes, key: m[1], kind: "nodes", name: m[1] }
            : undefined;
      if (!store) return send(404, status(404, "NotFound", `the server could not find the requested resource (${method} ${path})`));
      const current = store.map[store.key];
      if (!current) return send(404, status(404, "NotFound", `${store.kind} "${store.name}" not found`));
      const bump = (o: Obj): Obj => ({ ...o, metadata: { ...(o.metadata as Obj), resourceVersion: String(++revision) } });
      try {
        if (method === "GET") return send(200, current);
        if (method === "PATCH") return send(200, (store.map[store.key] = bump(mergePatch(current, JSON.parse(body)) as Obj)));
        if (method === "PUT") return send(200, (store.map[store.key] = bump(JSON.parse(body) as Obj)));
      } catch (e) {
        return send(400, status(400, "BadRequest", (e as Error).message));
      }
      return send(405, status(405, "MethodNotAllowed", `${method} is not supported here`));
    });
  });
  return new Promise((resolve, reject) => {
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        state,
        requests,
        stop: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

/** A kubeconfig for the API (a token user; the API checks nothing). */
export function kubeconfigFor(url: string, user: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- cluster:",
    `    server: ${url}`,
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
    "    token: fidelity",
    "",
  ].join("\n");
}
