/**
 * TEST DOUBLE, not real systemctl: `systemctl` for the lab's stand-in kubelet.
 * Run as `tsx systemctl.ts <args>` with LAB_DIR and LAB_NODE set (see test/lab/README.md).
 *
 *   systemctl start|restart kubelet   run the kubelet's start-up checks (exit 0 even when the kubelet
 *                                     then fails, as systemd does for a simple service; see is-active)
 *   systemctl stop kubelet
 *   systemctl is-active kubelet       prints active|failed|inactive (nothing with -q/--quiet); exit 0 only when active, else 3
 *   systemctl status kubelet          as is-active, with the failure reason
 *   systemctl enable [--now] kubelet | disable kubelet | daemon-reload
 * Container runtime units (containerd, crio, cri-docker) are accepted and do nothing.
 */
import { Fail, runMain, stepDuration } from "./common";
import { readKubeletState, setEnabled, startKubelet, stopKubelet } from "./kubelet";

const RUNTIME_UNITS = ["containerd", "crio", "cri-docker", "cri-dockerd", "docker"];

function unitName(u: string | undefined): string {
  return (u ?? "").replace(/\.service$/, "");
}

export async function main(args: string[]): Promise<number> {
  // systemctl -q/--quiet: is-active and is-enabled print nothing, only their exit status tells.
  const quiet = args.includes("-q") || args.includes("--quiet");
  const say = (text: string) => {
    if (!quiet) process.stdout.write(text);
  };
  const rest = args.filter((a) => !["-q", "--quiet", "--no-pager", "--no-block"].includes(a));
  const now = rest.includes("--now");
  const [verb, ...units] = rest.filter((a) => a !== "--now");
  if (verb === "daemon-reload") return 0;
  if (!verb || units.length === 0) throw new Fail("Too few arguments.", 1);
  for (const raw of units) {
    const unit = unitName(raw);
    if (RUNTIME_UNITS.includes(unit)) {
      if (verb === "is-active") say("active\n");
      continue;
    }
    if (unit !== "kubelet") throw new Fail(`Failed to ${verb} ${unit}.service: Unit ${unit}.service not found.`, verb === "is-active" ? 4 : 5);
    switch (verb) {
      case "start":
      case "restart":
      case "try-restart":
      case "reload-or-restart":
        await stepDuration("other");
        await startKubelet();
        break;
      case "stop":
        await stopKubelet();
        break;
      case "enable":
        setEnabled(true);
        if (now) await startKubelet();
        break;
      case "disable":
        setEnabled(false);
        if (now) await stopKubelet();
        break;
      case "is-active": {
        const s = readKubeletState();
        say(`${s.state}\n`);
        if (s.state !== "active") return 3;
        break;
      }
      case "is-enabled": {
        const s = readKubeletState();
        say(`${s.enabled ? "enabled" : "disabled"}\n`);
        if (!s.enabled) return 1;
        break;
      }
      case "status": {
        const s = readKubeletState();
        const active =
          s.state === "active" ? `active (running) since ${s.since}` : s.state === "failed" ? `failed (Result: exit-code) since ${s.since}` : "inactive (dead)";
        process.stdout.write(
          `● kubelet.service - kubelet: The Kubernetes Node Agent (lab stand-in)\n` +
            `     Loaded: loaded (/lib/systemd/system/kubelet.service; ${s.enabled ? "enabled" : "disabled"}; preset: enabled)\n` +
            `    Drop-In: /usr/lib/systemd/system/kubelet.service.d\n             └─10-kubeadm.conf\n` +
            `     Active: ${active}\n` +
            (s.endpoint ? `   Endpoint: ${s.endpoint}\n` : "") +
            (s.reason ? `\nkubelet[0]: E0000 run.go:72] "command failed" err="${s.reason}"\n` : ""),
        );
        if (s.state !== "active") return 3;
        break;
      }
      default:
        throw new Fail(`Unknown command verb ${verb}.`, 1);
    }
  }
  return 0;
}

if (require.main === module) runMain(main);
