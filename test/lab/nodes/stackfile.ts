/**
 * A lab from a Pulumi stack file: `config."kubeadm:nodes"` (name, host, port, criSocket, ...),
 * `config."kubeadm:kubernetesVersion"`, and the lab-only `config."lab:nodes"`:
 * `{ <node name>: { runtimes: [containerd|crio|cri-dockerd, ...], hostname?: "machine-7" } }` saying which
 * runtime sockets exist on a node (and, optionally, a machine hostname other than the node's name). Without it a node has the runtime its criSocket names, else containerd.
 */
import * as fs from "node:fs";
import { parse } from "yaml";
import {
  DEFAULT_VERSION,
  LabSpec,
  NodeSpec,
  Runtime,
  addressOf,
  canonicalVersion,
  isRuntime,
  runtimeOfCriSocket,
  validateSpec,
} from "./spec";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function labSpecFromStackText(text: string, where = "stack file"): LabSpec {
  const doc: unknown = parse(text);
  if (!isRecord(doc) || !isRecord(doc.config)) throw new Error(`${where}: no config: map`);
  const config = doc.config;
  const nodes = config["kubeadm:nodes"];
  if (!Array.isArray(nodes)) throw new Error(`${where}: kubeadm:nodes is not a list`);
  const labNodes = config["lab:nodes"] ?? {};
  if (!isRecord(labNodes)) throw new Error(`${where}: lab:nodes is not a map`);
  const version = config["kubeadm:kubernetesVersion"];
  if (version !== undefined && typeof version !== "string") {
    throw new Error(`${where}: kubeadm:kubernetesVersion is not a string`);
  }

  const specs: NodeSpec[] = nodes.map((raw: unknown, i: number): NodeSpec => {
    if (!isRecord(raw) || typeof raw.name !== "string") throw new Error(`${where}: kubeadm:nodes[${i}] has no name`);
    const name = raw.name;
    const address = typeof raw.host === "string" ? raw.host : addressOf(i);
    const port = raw.port === undefined ? 22 : Number(raw.port);
    const criSocket = typeof raw.criSocket === "string" ? raw.criSocket : undefined;
    const lab = labNodes[name];
    const hostname = isRecord(lab) && typeof lab.hostname === "string" ? lab.hostname : undefined;
    return { name, address, port, runtimes: runtimesOf(name, lab, criSocket, where), ...(hostname !== undefined ? { hostname } : {}) };
  });
  for (const key of Object.keys(labNodes)) {
    if (!specs.some((n) => n.name === key)) throw new Error(`${where}: lab:nodes names ${key}, which is not in kubeadm:nodes`);
  }
  return validateSpec({ version: canonicalVersion(version ?? DEFAULT_VERSION), nodes: specs });
}

function runtimesOf(name: string, lab: unknown, criSocket: string | undefined, where: string): Runtime[] {
  if (lab !== undefined) {
    if (!isRecord(lab) || !Array.isArray(lab.runtimes)) throw new Error(`${where}: lab:nodes.${name} has no runtimes list`);
    return lab.runtimes.map((r: unknown) => {
      if (typeof r !== "string" || !isRuntime(r)) throw new Error(`${where}: lab:nodes.${name}: unknown runtime ${String(r)}`);
      return r;
    });
  }
  if (criSocket !== undefined) {
    const r = runtimeOfCriSocket(criSocket);
    if (!r) throw new Error(`${where}: node ${name}: criSocket ${criSocket} names no known runtime; list it in lab:nodes`);
    return [r];
  }
  return ["containerd"];
}

export function readStackFile(file: string): LabSpec {
  return labSpecFromStackText(fs.readFileSync(file, "utf8"), file);
}
