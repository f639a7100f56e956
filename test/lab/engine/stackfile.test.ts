/**
 * The lab's reading of a stack file: the SSH key comes from the running lab, and without a lab (and no
 * key in the file) the read fails naming the command that starts one, where the CLI would fail on a
 * missing config value that says nothing of the lab.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { readLabStackFile, StackFileError } from "./stackfile";

let dir = "";
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackfile-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const stackFile = (config: string): string => {
  const f = path.join(dir, "Pulumi.lab.yaml");
  fs.writeFileSync(f, `config:\n${config}`);
  return f;
};

// Fails on 14290e7: the read went on without the key, and the preview failed with nothing printed.
test("no sshPrivateKey in the file and no lab up: a StackFileError naming the command that starts the lab", () => {
  const f = stackFile("  kubeadm:kubernetesVersion: v1.34.2\n");
  const labDir = path.join(dir, "no-lab");
  expect(() => readLabStackFile(f, "kubeadm", labDir)).toThrow(StackFileError);
  expect(() => readLabStackFile(f, "kubeadm", labDir)).toThrow(`${f} sets no sshPrivateKey and no lab is up at ${labDir} to supply its key: start the lab first (npm run lab -- up ${f}; for the demo cluster, npm run lab:demo)`);
});

test("the running lab's key is injected as a secret; a key in the file is kept and needs no lab", () => {
  const labDir = path.join(dir, "lab");
  fs.mkdirSync(path.join(labDir, "ssh"), { recursive: true });
  fs.writeFileSync(path.join(labDir, "ssh", "id_ed25519"), "KEY\n");
  const read = readLabStackFile(stackFile("  kubeadm:kubernetesVersion: v1.34.2\n"), "kubeadm", labDir);
  expect(read.secrets).toEqual({ "kubeadm:sshPrivateKey": "KEY\n" });
  expect(read.config["kubeadm:sshPrivateKey"]).toBeUndefined();
  const own = readLabStackFile(stackFile("  kubeadm:sshPrivateKey: OWN\n"), "kubeadm", path.join(dir, "no-lab"));
  expect(own.secrets).toEqual({});
  expect(own.config["kubeadm:sshPrivateKey"]).toBe("OWN");
});
