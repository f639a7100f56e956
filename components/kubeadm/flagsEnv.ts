/**
 * /var/lib/kubelet/kubeadm-flags.env: one line `KUBELET_KUBEADM_ARGS="<flags>"`, the value Go
 * `%q`-quoted, sourced by the kubelet's systemd drop-in. Source: kubeadm
 * `app/phases/kubelet/flags.go` WriteKubeletArgsToFile (checked in source):
 * `fmt.Sprintf("%s=%q\n", constants.KubeletEnvFileVariableName, strings.Join(argList, " "))`, with
 * `argList = ArgumentsToCommand(kubeadm's own flags, kubeletExtraArgs)`: kubeadm's flags sorted,
 * then the user's extra args in order (#135400). How kubeadm READS the file back at upgrade (to
 * drop the flag, #129279 / #138645) is UNVERIFIED here: this parser takes the strict reading of
 * what kubeadm writes (Go unquote, flags split on whitespace, as systemd splits `$VAR`). A leading
 * UTF-8 byte order mark and CRLF line ends are accepted and kept as they are.
 */
import { normalizeCriSocket } from "./criSocket";
import { goQuote, goUnquote } from "./goQuote";
import { FileEditError } from "./yamlEdit";

const FILE = "kubeadm-flags.env";
/** The variable kubeadm writes (`constants.KubeletEnvFileVariableName`). */
export const KUBELET_KUBEADM_ARGS = "KUBELET_KUBEADM_ARGS";
const FLAG = "--container-runtime-endpoint";

interface ArgsLine {
  /** Offsets of the quoted value (with its quotes) in the text. */
  start: number;
  end: number;
  flags: string[];
}

function locate(text: string): ArgsLine {
  if (typeof text !== "string") throw new FileEditError(FILE, "expected the file text as a string");
  const prefix = `${KUBELET_KUBEADM_ARGS}=`;
  let found: ArgsLine | undefined;
  // A leading UTF-8 byte order mark and CR of CRLF line ends are kept in the text, outside every line.
  const bom = text.startsWith("\ufeff") ? 1 : 0;
  let offset = bom;
  for (const raw of text.slice(bom).split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.startsWith(prefix)) {
      if (found) throw new FileEditError(FILE, `has more than one ${KUBELET_KUBEADM_ARGS} line`);
      const quoted = line.slice(prefix.length);
      let value: string;
      try {
        value = goUnquote(quoted);
      } catch (e) {
        throw new FileEditError(FILE, `${KUBELET_KUBEADM_ARGS} is not a Go-quoted string: ${(e as Error).message}`);
      }
      const start = offset + prefix.length;
      found = { start, end: start + quoted.length, flags: value.split(/\s+/).filter((f) => f !== "") };
    } else if (/^\s*(export\s+)?KUBELET_KUBEADM_ARGS\s*=/.test(line)) {
      throw new FileEditError(FILE, `${KUBELET_KUBEADM_ARGS} line is not in kubeadm's form (${KUBELET_KUBEADM_ARGS}="...")`);
    }
    offset += raw.length + 1;
  }
  if (!found) throw new FileEditError(FILE, `has no ${KUBELET_KUBEADM_ARGS} line`);
  return found;
}

/**
 * The kubelet flags in the `KUBELET_KUBEADM_ARGS` value, in order (split on whitespace after Go
 * unquoting). `KUBELET_KUBEADM_ARGS=""` (possible from 1.35, #133778) gives `[]`.
 * @throws FileEditError when there is no such line, two of them, or the value is not Go-quoted.
 */
export function parseKubeadmFlags(text: string): string[] {
  return locate(text).flags;
}

/** Indexes of the tokens that make up `--container-runtime-endpoint` occurrences, and their values. */
function endpointOccurrences(flags: string[]): { drop: Set<number>; values: string[] } {
  const drop = new Set<number>();
  const values: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i];
    if (f.startsWith(`${FLAG}=`)) {
      const v = f.slice(FLAG.length + 1);
      if (v === "") throw new FileEditError(FILE, `${FLAG} has an empty value`);
      drop.add(i);
      values.push(v);
    } else if (f === FLAG) {
      const v = flags[i + 1];
      if (v === undefined || v.startsWith("-")) throw new FileEditError(FILE, `${FLAG} has no value`);
      drop.add(i).add(i + 1);
      values.push(v);
      i++;
    }
  }
  if (new Set(values).size > 1) {
    throw new FileEditError(FILE, `${FLAG} is given several times with different values: ${values.join(", ")}`);
  }
  return { drop, values };
}

function withFlags(text: string, line: ArgsLine, flags: string[]): string {
  return text.slice(0, line.start) + goQuote(flags.join(" ")) + text.slice(line.end);
}

/**
 * The file without `--container-runtime-endpoint` (`--container-runtime-endpoint=x` and
 * `--container-runtime-endpoint x` forms), every other flag kept in order, and the endpoint the
 * flag carried (as written, not normalised). Other lines, comments and blank lines are kept byte
 * for byte; the value is re-quoted with Go `%q` and its flags joined by single spaces, as kubeadm
 * writes it. What upgrade does from 1.33 with the gate on (#129279) and always in 1.37 (#138645).
 * @returns `{ text }` with the same string when there is no such flag.
 * @throws FileEditError when there is no KUBELET_KUBEADM_ARGS line, two of them, bad quoting, the
 *   flag twice with different values, or the flag without a value.
 */
export function removeContainerRuntimeEndpointFlag(kubeadmFlagsEnv: string): { text: string; endpoint?: string } {
  const line = locate(kubeadmFlagsEnv);
  const { drop, values } = endpointOccurrences(line.flags);
  if (values.length === 0) return { text: kubeadmFlagsEnv };
  const kept = line.flags.filter((_, i) => !drop.has(i));
  return { text: withFlags(kubeadmFlagsEnv, line, kept), endpoint: values[0] };
}

/**
 * The file with `--container-runtime-endpoint=<normalised endpoint>`: an existing occurrence gets
 * the new value in place (in `=` form, duplicates dropped); a new one goes first, where kubeadm puts
 * it (its own flags sorted first, `container-runtime-endpoint` sorting first among them, then the
 * user's extra args: #135400). Works on an empty value (`KUBELET_KUBEADM_ARGS=""`). The legacy
 * layout (gate off) that a rollback to the flag needs.
 * @returns the same string when the flag is already there, once, in `=` form, with this value.
 * @throws KubeadmConfigError (field `criSocket`) on an endpoint {@link normalizeCriSocket} refuses.
 * @throws FileEditError as {@link removeContainerRuntimeEndpointFlag}.
 */
export function addContainerRuntimeEndpointFlag(kubeadmFlagsEnv: string, endpoint: string): string {
  const value = normalizeCriSocket(endpoint);
  const line = locate(kubeadmFlagsEnv);
  const { drop } = endpointOccurrences(line.flags);
  const wanted = `${FLAG}=${value}`;
  if (drop.size === 1 && line.flags.filter((f) => f === wanted).length === 1) return kubeadmFlagsEnv;
  const flags: string[] = [];
  let placed = false;
  line.flags.forEach((f, i) => {
    if (!drop.has(i)) flags.push(f);
    else if (!placed) {
      flags.push(wanted);
      placed = true;
    }
  });
  if (!placed) flags.unshift(wanted);
  return withFlags(kubeadmFlagsEnv, line, flags);
}

/** The text kubeadm writes for these flags: `KUBELET_KUBEADM_ARGS="<flags joined by spaces, %q>"\n`. */
export function renderKubeadmFlagsEnv(flags: string[]): string {
  return `${KUBELET_KUBEADM_ARGS}=${goQuote(flags.join(" "))}\n`;
}
