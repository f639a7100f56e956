import { caught } from "./helpers";
import { checkUpgrade, parseKubernetesVersion, SUPPORTED_MINORS, versionFacts } from "../../../components/kubeadm/version";
import { KubeadmConfigError } from "../../../components/kubeadm/types";

const v = parseKubernetesVersion;

describe("parseKubernetesVersion", () => {
  it("accepts with and without v", () => {
    expect(v("v1.34.2")).toEqual({ major: 1, minor: 34, patch: 2, text: "v1.34.2" });
    expect(v("1.31.0")).toEqual({ major: 1, minor: 31, patch: 0, text: "v1.31.0" });
  });
  it.each(["", "v1.34", "1.34.2-rc.0", " v1.34.2", "v01.34.2", "V1.34.2", "v1.34.2\n", "vv1.34.2", "latest", "1.34.x"])(
    "rejects malformed %j",
    (t) => {
      const err = caught(() => v(t));
      expect(err).toBeInstanceOf(KubeadmConfigError);
      expect((err as KubeadmConfigError).field).toBe("kubernetesVersion");
    },
  );
  it.each(["v1.30.9", "v1.38.0", "v2.34.0", "v0.34.0"])("rejects unsupported %s", (t) => {
    expect(() => v(t)).toThrow(/not supported/);
  });
  it("lists 1.31..1.37", () => expect([...SUPPORTED_MINORS]).toEqual([31, 32, 33, 34, 35, 36, 37]));
});

describe("versionFacts", () => {
  const f = (m: number) => versionFacts(v(`v1.${m}.0`));
  it("gate stage per minor", () => {
    expect(SUPPORTED_MINORS.map((m) => f(m).gate)).toEqual(["absent", "alpha", "alpha", "beta", "beta", "ga", "removed"]);
    expect(SUPPORTED_MINORS.map((m) => f(m).gateDefault)).toEqual([false, false, false, true, true, true, true]);
    expect(SUPPORTED_MINORS.map((m) => f(m).gateKnown)).toEqual([false, true, true, true, true, true, false]);
    expect(SUPPORTED_MINORS.map((m) => f(m).gateSettableFalse)).toEqual([true, true, true, true, true, false, false]);
  });
  it("upgrade behaviour per minor", () => {
    // As kubeadm v1.31.14 ... v1.37.2 do in their source: 1.37 touches neither the flag nor the annotation.
    expect(SUPPORTED_MINORS.map((m) => f(m).upgradeRemovesFlag)).toEqual([false, false, true, true, true, true, false]);
    expect(SUPPORTED_MINORS.map((m) => f(m).upgradeRemovesAnnotationWhenGateOn)).toEqual([false, false, true, true, true, true, false]);
    expect(SUPPORTED_MINORS.map((m) => f(m).upgradeRemovesAnnotationAlways)).toEqual([false, false, false, false, false, true, false]);
    expect(SUPPORTED_MINORS.map((m) => f(m).upgradeRemovesPodInfraImage)).toEqual([false, false, false, false, true, false, false]);
    expect(SUPPORTED_MINORS.map((m) => f(m).writesPodInfraImage)).toEqual([true, true, true, true, false, false, false]);
    expect(f(37).acceptsV1beta3).toBe(false);
    expect(f(36).acceptsV1beta3).toBe(true);
    expect(f(35).flagsFileMayBeEmpty).toBe(true);
    expect(f(34).minor).toBe(34);
  });
  it("rejects a version outside the table", () => {
    expect(() => versionFacts({ major: 1, minor: 30, patch: 0, text: "v1.30.0" })).toThrow(KubeadmConfigError);
  });
});

describe("checkUpgrade", () => {
  it("allows patch, same, and next minor", () => {
    expect(() => checkUpgrade(v("v1.33.1"), v("v1.33.4"))).not.toThrow();
    expect(() => checkUpgrade(v("v1.33.1"), v("v1.33.1"))).not.toThrow();
    expect(() => checkUpgrade(v("v1.33.9"), v("v1.34.0"))).not.toThrow();
  });
  it("refuses downgrades and skipped minors", () => {
    expect(() => checkUpgrade(v("v1.34.0"), v("v1.33.9"))).toThrow(/downgrade/);
    expect(() => checkUpgrade(v("v1.34.2"), v("v1.34.1"))).toThrow(/downgrade/);
    expect(() => checkUpgrade(v("v1.32.0"), v("v1.34.0"))).toThrow(/one minor version at a time/);
  });
});
