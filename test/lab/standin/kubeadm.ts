/**
 * TEST DOUBLE, NOT real kubeadm: the lab's kubeadm stand-in, faithful to
 * ../../../../shared/kubeadm-facts.md for the node's installed version (/etc/lab-node/kubeadm-version).
 * Run as `tsx kubeadm.ts <args>` with LAB_DIR and LAB_NODE set (LAB_ROOT prefixes node paths).
 *
 *   kubeadm version [-o short|json]
 *   kubeadm init --config <file> [--upload-certs] [--certificate-key K] [--ignore-preflight-errors a,b]
 *   kubeadm init [--node-name N] [--cri-socket S] [--kubernetes-version V] [--control-plane-endpoint E] [--pod-network-cidr C] [--service-cidr C]
 *   kubeadm init phase upload-certs --upload-certs [--certificate-key K]
 *   kubeadm join --config <file> [--ignore-preflight-errors a,b]
 *   kubeadm join <endpoint> --token T --discovery-token-ca-cert-hash sha256:H [--control-plane --certificate-key K] [--cri-socket S] [--node-name N]
 *   kubeadm token create [--ttl D] [--print-join-command] [token]
 *   kubeadm certs certificate-key
 *   kubeadm upgrade plan | apply <version> [-y|--yes] [-f|--force] [--dry-run] | node [--dry-run]
 *   kubeadm reset [-f|--force] [--cri-socket S]
 * Each subcommand lives in its own module, loaded on demand to keep start-up small.
 */
import { appendFileSync, mkdirSync } from "fs";
import { join } from "path";
import { Fail, installedVersion, labDir, nodeName, runMain } from "./common";

/** Commands that change a node or the cluster: each success is logged to `$LAB_DIR/cluster/events.log`. */
const LOGGED = new Set(["init", "join", "upgrade", "reset"]);

/**
 * Run one kubeadm command; a successful init/join/upgrade/reset appends `<time> <node> kubeadm <cmd> <sub>`
 * to the cluster's events log, so tests can count what ran on which node from the stand-in's side
 * (not from the code under test).
 */
export async function main(args: string[]): Promise<number> {
  const code = await dispatch(args);
  const [cmd, sub] = args;
  if (code === 0 && cmd !== undefined && LOGGED.has(cmd) && sub !== "phase") {
    const dir = join(labDir(), "cluster");
    mkdirSync(dir, { recursive: true });
    appendFileSync(join(dir, "events.log"), `${new Date().toISOString()} ${nodeName()} kubeadm ${cmd}${cmd === "upgrade" && sub ? ` ${sub}` : ""}\n`);
  }
  return code;
}

async function dispatch(args: string[]): Promise<number> {
  const a = args.filter((x) => !/^--v=\d+$|^-v=?\d+$/.test(x));
  const [cmd, sub, ...rest] = a;
  switch (cmd) {
    case "version": {
      const v = installedVersion();
      const o = a.indexOf("-o") >= 0 ? a[a.indexOf("-o") + 1] : a.find((x) => x.startsWith("--output="))?.slice(9) ?? a.find((x) => x.startsWith("-o="))?.slice(3);
      if (o === "short") process.stdout.write(`${v.text}\n`);
      else if (o === "json") process.stdout.write(JSON.stringify({ clientVersion: { major: String(v.major), minor: String(v.minor), gitVersion: v.text, platform: "linux/amd64" } }, null, 2) + "\n");
      else process.stdout.write(`kubeadm version: &version.Info{Major:"${v.major}", Minor:"${v.minor}", GitVersion:"${v.text}", GitTreeState:"clean", Compiler:"gc", Platform:"linux/amd64"} (lab stand-in)\n`);
      return 0;
    }
    case "init":
      if (sub === "phase") {
        if (rest[0] === "upload-certs") return (await import("./token")).uploadCertsPhase(rest.slice(1));
        throw new Fail(`lab stand-in: kubeadm init phase ${rest[0] ?? ""} is not supported`, 2);
      }
      return (await import("./init")).init(a.slice(1));
    case "join":
      return (await import("./join")).join(a.slice(1));
    case "token":
      if (sub === "create") return (await import("./token")).tokenCreate(rest);
      throw new Fail(`lab stand-in: kubeadm token ${sub ?? ""} is not supported`, 2);
    case "certs":
      if (sub === "certificate-key") return (await import("./token")).certificateKey();
      throw new Fail(`lab stand-in: kubeadm certs ${sub ?? ""} is not supported`, 2);
    case "upgrade": {
      const u = await import("./upgrade");
      if (sub === "plan") return u.plan(rest);
      if (sub === "apply") return u.apply(rest);
      if (sub === "node") return u.node(rest);
      throw new Fail(`lab stand-in: kubeadm upgrade ${sub ?? ""} is not supported`, 2);
    }
    case "reset":
      return (await import("./reset")).reset(a.slice(1));
    default:
      throw new Fail(`unknown command ${JSON.stringify(cmd ?? "")} for "kubeadm" (lab stand-in)`, 1);
  }
}

if (require.main === module) runMain(main);
