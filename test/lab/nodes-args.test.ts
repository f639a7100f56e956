/** The lab nodes' inputs: stack files, `up` flags, sshd_config and wrappers (pure, no processes). */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { labSpecFromStackText, parseUpArgs, canonicalVersion, runtimeOfCriSocket } from "./nodes";
import { renderSshdConfig } from "./nodes/sshd-config";
import { renderWrapper } from "./nodes/wrappers";

const stack = `
config:
  kubeadm:kubernetesVersion: "1.34"
  kubeadm:sshPrivateKey:
    secure: AAABAK
  kubeadm:nodes:
    - name: cp-1
      role: control-plane
      host: 127.0.0.12
      criSocket: unix:///var/run/crio/crio.sock
    - name: w-1
      role: worker
      host: 127.0.0.13
      port: 2222
    - name: w-2
      role: worker
      criSocket: /run/cri-dockerd.sock
    - name: w-3
      role: worker
      host: 127.0.0.15
  lab:nodes:
    w-3:
      runtimes: [containerd, crio]
`;

test("a stack file gives names, hosts, ports, runtimes and the canonical version", () => {
  expect(labSpecFromStackText(stack)).toEqual({
    version: "v1.34.0",
    nodes: [
      { name: "cp-1", address: "127.0.0.12", port: 22, runtimes: ["crio"] },
      { name: "w-1", address: "127.0.0.13", port: 2222, runtimes: ["containerd"] },
      { name: "w-2", address: "127.0.0.4", port: 22, runtimes: ["cri-dockerd"] },
      { name: "w-3", address: "127.0.0.15", port: 22, runtimes: ["containerd", "crio"] },
    ],
  });
});

test("lab:nodes can give a node no runtime, and must name known nodes and runtimes", () => {
  const none = stack.replace("runtimes: [containerd, crio]", "runtimes: []");
  expect(labSpecFromStackText(none).nodes[3]?.runtimes).toEqual([]);
  expect(() => labSpecFromStackText(stack.replace("    w-3:\n", "    w-9:\n"))).toThrow(/lab:nodes names w-9/);
  expect(() => labSpecFromStackText(stack.replace("[containerd, crio]", "[docker]"))).toThrow(/unknown runtime docker/);
  expect(() => labSpecFromStackText(stack.replace("127.0.0.13", "127.0.0.12").replace("port: 2222", "port: 22"))).toThrow(
    /127\.0\.0\.12:22 is used by another node/,
  );
  expect(() => labSpecFromStackText(stack.replace("127.0.0.13", "10.0.0.1"))).toThrow(/not a loopback address/);
  expect(() => labSpecFromStackText("config: {}\n")).toThrow(/kubeadm:nodes is not a list/);
});

test("up flags: --nodes, --runtimes, --version, or a stack file", () => {
  const { spec, fresh } = parseUpArgs(["--nodes", "4", "--runtimes", "crio,none,containerd+cri-dockerd", "--version", "v1.31.4"]);
  expect(fresh).toBe(false);
  expect(spec).toEqual({
    version: "v1.31.4",
    nodes: [
      { name: "node-1", address: "127.0.0.2", port: 22, runtimes: ["crio"] },
      { name: "node-2", address: "127.0.0.3", port: 22, runtimes: [] },
      { name: "node-3", address: "127.0.0.4", port: 22, runtimes: ["containerd", "cri-dockerd"] },
      { name: "node-4", address: "127.0.0.5", port: 22, runtimes: ["containerd"] },
    ],
  });
  expect(() => parseUpArgs(["--nodes", "1", "--runtimes", "crio,crio"])).toThrow(/lists 2 nodes/);
  expect(() => parseUpArgs(["--nodes", "0"])).toThrow(/not a positive/);
  expect(() => parseUpArgs(["--nodes", "2", "--runtimes", "containerd+podman"])).toThrow(/unknown runtime "podman"/);
  expect(() => parseUpArgs([])).toThrow(/--nodes N or a stack file/);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-args-"));
  const file = path.join(dir, "Pulumi.lab.yaml");
  fs.writeFileSync(file, stack);
  expect(parseUpArgs([file, "--fresh"]).fresh).toBe(true);
  expect(parseUpArgs([file, "--version", "1.35.1"]).spec.version).toBe("v1.35.1");
  expect(() => parseUpArgs([file, "--nodes", "2"])).toThrow(/not both/);
  fs.rmSync(dir, { recursive: true });
});

test("versions and criSockets", () => {
  expect(canonicalVersion("v1.33.2")).toBe("v1.33.2");
  expect(canonicalVersion("1.36")).toBe("v1.36.0");
  expect(() => canonicalVersion("latest")).toThrow(/not like v1.33.2/);
  expect(runtimeOfCriSocket("unix:///run/containerd/containerd.sock")).toBe("containerd");
  expect(runtimeOfCriSocket("unix:///var/run/cri-dockerd.sock")).toBe("cri-dockerd");
  expect(runtimeOfCriSocket("/var/run/crio/crio.sock")).toBe("crio");
  expect(runtimeOfCriSocket("unix:///run/podman/podman.sock")).toBeUndefined();
});

test("sshd_config: own address, key, log level, no PAM; wrappers quote their paths", () => {
  const cfg = renderSshdConfig({
    address: "127.0.0.7",
    port: 22,
    hostKeyFile: "/r/.lab/nodes/n/ssh_host_ed25519_key",
    authorizedKeysFile: "/r/.lab/ssh/id_ed25519.pub",
    opensshVersion: [9, 2],
  });
  for (const line of [
    "ListenAddress 127.0.0.7:22",
    "HostKey /r/.lab/nodes/n/ssh_host_ed25519_key",
    "AuthorizedKeysFile /r/.lab/ssh/id_ed25519.pub",
    "PermitRootLogin prohibit-password",
    "PidFile /run/sshd.pid",
    "UsePAM no",
    "LogLevel VERBOSE",
  ]) {
    expect(cfg.split("\n")).toContain(line);
  }
  expect(cfg).not.toContain("PerSourcePenalties");
  expect(renderSshdConfig({ address: "127.0.0.7", port: 22, hostKeyFile: "/k", authorizedKeysFile: "/a", opensshVersion: [10, 0] })).toContain(
    "PerSourcePenalties no",
  );
  expect(() => renderSshdConfig({ address: "127.0.0.7", port: 22, hostKeyFile: "/a b/k", authorizedKeysFile: "/a", opensshVersion: [9, 2] })).toThrow(
    /holds a space/,
  );
  expect(renderWrapper("kubectl", "/x/it's/.lab", "n1", { repoRoot: "/repo", launcher: "tsx" })).toBe(
    "#!/bin/bash\n# lab stand-in for kubectl on node n1 (test/lab/nodes/wrappers.ts)\n" +
      `exec env LAB_DIR='/x/it'\\''s/.lab' LAB_NODE='n1' '/repo/node_modules/.bin/tsx' '/repo/test/lab/standin/kubectl.ts' "$@"\n`,
  );
  expect(renderWrapper("kubectl", "/x/it's/.lab", "n1", { launcher: "bundle", nodeBinary: "/usr/bin/node" })).toBe(
    "#!/bin/bash\n# lab stand-in for kubectl on node n1 (test/lab/nodes/wrappers.ts)\n" +
      `exec env LAB_DIR='/x/it'\\''s/.lab' LAB_NODE='n1' '/usr/bin/node' '/x/it'\\''s/.lab/standin/kubectl.js' "$@"\n`,
  );
});
