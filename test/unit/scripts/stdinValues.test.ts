/**
 * A step's stdin starts with its values (for `pulumi preview --diff`); the command text reads them off in
 * the login shell, so the script sees only its data.
 */
import { spawnSync } from "child_process";
import { remoteCommand, renderScript, stdinWithValues } from "../../../components/scripts/script";
import { withLibrary } from "./bash";

const script = withLibrary(renderScript("w-1", [`printf '[%s]' "$(cat)"`]));

test.each(["sh", "bash"])("through %s as the login shell, the script reads only the data after the values", (shell) => {
  const data = "line one\n---\nline three (a --- line of the data stays data)\n";
  const stdin = stdinWithValues("pulumi-kubeadm step upgrade on node w-1", [["kubernetesVersion", "v1.35.0"], ["criSocket", "unix:///run/containerd/containerd.sock"]], data);
  expect(stdin).toBe(`pulumi-kubeadm step upgrade on node w-1\nkubernetesVersion: v1.35.0\ncriSocket: unix:///run/containerd/containerd.sock\n---\n${data}`);
  const r = spawnSync(shell, ["-c", remoteCommand(script, true)], { input: stdin, encoding: "utf8" });
  expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ status: 0, stderr: "", stdout: `[${data.replace(/\n$/, "")}]` });
  // No data: the script's stdin is empty.
  const none = spawnSync(shell, ["-c", remoteCommand(script, true)], { input: stdinWithValues("t", [], ""), encoding: "utf8" });
  expect(none.stdout).toBe("[]");
});

test("a value that is not one line is refused", () => {
  expect(() => stdinWithValues("t", [["kubernetesVersion", "v1\n---"]], "")).toThrow(/is not one line of values/);
  expect(() => stdinWithValues("---", [], "")).toThrow(/is not one line of values/);
});
