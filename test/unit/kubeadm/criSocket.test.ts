import { caught } from "./helpers";
import {
  CRI_SOCKET_PROBE_ORDER,
  criSocketSchemeWarning,
  multipleCriEndpointsMessage,
  normalizeCriSocket,
} from "../../../components/kubeadm/criSocket";
import { goQuote, goUnquote, renderInstanceConfig } from "../../../components/kubeadm/instanceConfig";
import { KubeadmConfigError } from "../../../components/kubeadm/types";

describe("normalizeCriSocket", () => {
  it("keeps unix:// and prepends it to absolute paths", () => {
    expect(normalizeCriSocket("unix:///run/containerd/containerd.sock")).toBe("unix:///run/containerd/containerd.sock");
    expect(normalizeCriSocket("/var/run/crio/crio.sock")).toBe("unix:///var/run/crio/crio.sock");
    expect(normalizeCriSocket("/run/k3s/containerd@1+x_y-z.sock")).toBe("unix:///run/k3s/containerd@1+x_y-z.sock");
  });
  it.each([
    ["", /empty/],
    ["run/containerd.sock", /relative/],
    ["./c.sock", /relative/],
    ["tcp://10.0.0.1:2375", /tcp:\/\/ endpoints are not supported/],
    ["npipe:////./pipe/containerd-containerd", /npipe/],
    ["http://x/y", /only unix/],
    ["unix://run/c.sock", /absolute path/],
    ["/run/con tainerd.sock", /not safe/],
    ["/run/c.sock\n", /not safe/],
    ["/run/$(reboot).sock", /not safe/],
    ["/run/`id`.sock", /not safe/],
    ["/run/a;b.sock", /not safe/],
    ["/run/'a'.sock", /not safe/],
    ['/run/"a".sock', /not safe/],
    ["/run/\u00e9.sock", /not safe/],
    ["/run/../etc/shadow", /"\.\."/],
    ["unix:///run/", /directory/],
  ])("refuses %j", (input, re) => {
    const err: unknown = caught(() => normalizeCriSocket(input));
    expect(err).toBeInstanceOf(KubeadmConfigError);
    expect((err as KubeadmConfigError).field).toBe("criSocket");
    expect((err as Error).message).toMatch(re);
  });
});

describe("kubeadm texts", () => {
  it("scheme warning, kubeadm's words", () => {
    expect(criSocketSchemeWarning("/run/containerd/containerd.sock")).toBe(
      'Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors in the future. ' +
        'Automatically prepending scheme "unix" to the "criSocket" with value "/run/containerd/containerd.sock". Please update your configuration!',
    );
    expect(criSocketSchemeWarning("unix:///run/containerd/containerd.sock")).toBeUndefined();
  });
  it("probe order", () => {
    expect(CRI_SOCKET_PROBE_ORDER).toEqual([
      "unix:///var/run/containerd/containerd.sock",
      "unix:///var/run/crio/crio.sock",
      "unix:///var/run/cri-dockerd.sock",
    ]);
  });
  it("multiple endpoints error", () => {
    expect(multipleCriEndpointsMessage(["unix:///var/run/containerd/containerd.sock", "unix:///var/run/cri-dockerd.sock"])).toBe(
      "found multiple CRI endpoints on the host. Please define which one do you wish to use by setting the 'criSocket' field " +
        "in the kubeadm configuration file: unix:///var/run/containerd/containerd.sock, unix:///var/run/cri-dockerd.sock",
    );
  });
});

describe("instance config", () => {
  it("renders kubeadm's exact bytes", () => {
    expect(renderInstanceConfig("unix:///var/run/containerd/containerd.sock")).toBe(
      'containerRuntimeEndpoint: "unix:///var/run/containerd/containerd.sock"\n',
    );
    expect(renderInstanceConfig("/run/crio/crio.sock")).toBe('containerRuntimeEndpoint: "unix:///run/crio/crio.sock"\n');
  });
  it("refuses a bad endpoint", () => {
    expect(() => renderInstanceConfig('/x"\ny: 1')).toThrow(KubeadmConfigError);
  });
});

describe("goQuote / goUnquote (Go strconv semantics)", () => {
  it.each([
    ["plain", '"plain"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ["\n\t\r\x07\b\f\v", '"\\n\\t\\r\\a\\b\\f\\v"'],
    ["\x00\x1b\x7f", '"\\x00\\x1b\\x7f"'],
    ["é日本", '"é日本"'],
    ["\u00a0\u200b", '"\\u00a0\\u200b"'],
    ["\u{10ffff}", '"\\U0010ffff"'],
    ["$(x) `y` 'z'", "\"$(x) `y` 'z'\""],
  ])("quotes %j", (s, q) => {
    expect(goQuote(s)).toBe(q);
    expect(goUnquote(q)).toBe(s);
  });
  it("refuses lone surrogates", () => expect(() => goQuote("\ud800")).toThrow(/surrogate/));
  it.each(['"a', 'a"', '"a"b"', '"\\q"', '"\\x1"', '"a\\"', "'a'"])("unquote refuses %j", (q) => {
    expect(() => goUnquote(q)).toThrow();
  });
  it("unquotes octal and \\u", () => expect(goUnquote('"\\101\\u00e9"')).toBe("Aé"));
});
