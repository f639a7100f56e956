import { caught } from "./helpers";
import { kubeadmFeatureGates, NODE_LOCAL_CRI_SOCKET, nodeLocalCriSocketEnabled } from "../../../components/kubeadm/gates";
import { parseKubernetesVersion } from "../../../components/kubeadm/version";
import { KubeadmConfigError } from "../../../components/kubeadm/types";

type Outcome = boolean | "throws";
// minor: [unset, true, false]
const TABLE: Record<number, [Outcome, Outcome, Outcome]> = {
  31: [false, "throws", false],
  32: [false, true, false],
  33: [false, true, false],
  34: [true, true, false],
  35: [true, true, false],
  36: [true, true, "throws"],
  37: [true, true, "throws"],
};

describe("nodeLocalCriSocketEnabled: honour or refuse, every minor", () => {
  for (const [minor, [unset, on, off]] of Object.entries(TABLE)) {
    const ver = `v1.${minor}.3`;
    const cases: [string, Record<string, boolean> | undefined, Outcome][] = [
      ["unset", undefined, unset],
      ["unset (other gates)", { SomeOtherGate: true }, unset],
      ["true", { [NODE_LOCAL_CRI_SOCKET]: true }, on],
      ["false", { [NODE_LOCAL_CRI_SOCKET]: false }, off],
    ];
    for (const [label, gates, want] of cases) {
      it(`${ver} gate ${label} -> ${want}`, () => {
        if (want === "throws") {
          const err: unknown = caught(() => nodeLocalCriSocketEnabled(ver, gates));
          expect(err).toBeInstanceOf(KubeadmConfigError);
          expect((err as KubeadmConfigError).field).toBe("featureGates.NodeLocalCRISocket");
          expect((err as Error).message).toMatch(minor === "31" ? /no NodeLocalCRISocket gate/ : /cannot be false/);
        } else {
          expect(nodeLocalCriSocketEnabled(ver, gates)).toBe(want);
        }
      });
    }
  }
  it("says why on 1.36 and 1.37", () => {
    expect(() => nodeLocalCriSocketEnabled("1.36.0", { NodeLocalCRISocket: false })).toThrow(/GA and locked to true in 1.36/);
    expect(() => nodeLocalCriSocketEnabled("1.37.0", { NodeLocalCRISocket: false })).toThrow(/removed in 1.37/);
  });
  it("refuses non-boolean values, bad versions", () => {
    expect(() => nodeLocalCriSocketEnabled("v1.34.0", { NodeLocalCRISocket: "true" as unknown as boolean })).toThrow(/must be true or false/);
    expect(() => nodeLocalCriSocketEnabled("v1.34.0", { Other: 1 as unknown as boolean })).toThrow(KubeadmConfigError);
    expect(() => nodeLocalCriSocketEnabled("v1.30.0")).toThrow(/not supported/);
    expect(() => nodeLocalCriSocketEnabled("banana")).toThrow(/not a Kubernetes version/);
    expect(() => nodeLocalCriSocketEnabled("v1.34.0", [] as unknown as Record<string, boolean>)).toThrow(/must be a map/);
  });
});

describe("kubeadmFeatureGates", () => {
  const v = parseKubernetesVersion;
  it("drops the key where kubeadm rejects it", () => {
    expect(kubeadmFeatureGates(v("v1.31.0"), { NodeLocalCRISocket: false, RootlessControlPlane: true })).toEqual({ RootlessControlPlane: true });
    expect(kubeadmFeatureGates(v("v1.37.0"), { NodeLocalCRISocket: true })).toEqual({});
  });
  it("keeps it where kubeadm knows it", () => {
    for (const m of [32, 33, 34, 35]) {
      expect(kubeadmFeatureGates(v(`v1.${m}.0`), { NodeLocalCRISocket: false })).toEqual({ NodeLocalCRISocket: false });
    }
    expect(kubeadmFeatureGates(v("v1.36.0"), { NodeLocalCRISocket: true })).toEqual({ NodeLocalCRISocket: true });
    expect(kubeadmFeatureGates(v("v1.34.0"))).toEqual({});
  });
  it("refuses what it cannot honour", () => {
    expect(() => kubeadmFeatureGates(v("v1.36.0"), { NodeLocalCRISocket: false })).toThrow(KubeadmConfigError);
  });
  it("does not mutate the input", () => {
    const g = { NodeLocalCRISocket: true };
    kubeadmFeatureGates(v("v1.37.0"), g);
    expect(g).toEqual({ NodeLocalCRISocket: true });
  });
});
