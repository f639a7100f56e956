/**
 * Step kind `uncordon` of the LAST rollout batch of workers (step id `<batch>-uncordon`; every earlier
 * batch is uncordoned by the next batch's `drain`, first thing), on the first control-plane node: in ONE session, each member this component cordoned (annotation
 * `kubeadm.pulumi.com/cordoned`, set by the batch's `drain`) is uncordoned and its mark removed, once
 * every member's kubelet step is done (kubeadm's upgrade guide: uncordon after the kubelet); the members'
 * own `node-metadata` steps come after it, off the rollout's path. A Node an operator cordoned stays so.
 * Its text holds the target version and its stdin the members' CRI endpoints, so it runs after every
 * version rollout and every runtime switch (the two things the batch's drain drains for). Its create runs
 * no command when no member had joined before this run (`idleOnJoin`). No delete; its `triggers` are its
 * members.
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";
import { uncordonLines } from "./cordon";
import { membersWords } from "./words";

/**
 * For each member in order, `uncordonLines` (components/steps/cordon.ts): uncordon it when it carries this
 * component's cordon mark, and remove the mark; nothing is written for a member without it. Fails
 * (pk_fail, naming the member) when its Node cannot be read.
 * @param version the target version, a comment line of the text (so the step runs after every rollout).
 */
export function uncordonScripts(runsOn: string, members: string[], version: string): StepScripts {
  const create = renderScript(membersWords(members), [`: rollout ${shellQuote(version)} on ${shellQuote(runsOn)}`, ...uncordonLines(members)]);
  return { create, update: create };
}

/** `uncordon` of the last rollout batch: uncordon the members this component cordoned, in one session (each earlier batch's is its next batch's drain). */
export const batchUncordon: StepKind = {
  action: "uncordon",
  shows: ["kubernetesVersion"],
  summary: ({ members }) => `for ${membersWords(members ?? [])}, in one session: uncordon each that this component cordoned, after its kubelet; runs after every version rollout and runtime switch`,
  scripts: ({ cluster, step }) => uncordonScripts(step.runsOn, step.members ?? [], cluster.version.text),
  // The members' endpoints, one line each (not read by the script): a runtime switch runs it.
  stdin: {
    endpointsOf: ({ step }) => step.members ?? [],
    render: ({ step }, v) => (step.members ?? []).map((m) => `${m} ${v.endpointOf(m)}\n`).join(""),
  },
  idleOnJoin: true,
  triggers: (ctx) => ctx.step.members ?? [],
};
