/** One node's sshd_config: its own address, host key, pid file and log; root login by the lab key only. */

export interface SshdConfigInput {
  address: string;
  port: number;
  hostKeyFile: string;
  authorizedKeysFile: string;
  /** OpenSSH version as [major, minor], to add options that only newer sshd knows */
  opensshVersion: [number, number];
}

export function renderSshdConfig(c: SshdConfigInput): string {
  for (const p of [c.hostKeyFile, c.authorizedKeysFile]) {
    if (/[\s"%]/.test(p)) throw new Error(`sshd_config: path ${JSON.stringify(p)} holds a space, quote or %`);
  }
  const [major, minor] = c.opensshVersion;
  const lines = [
    "# written by the lab (test/lab/nodes); not the system's sshd",
    `ListenAddress ${c.address}:${c.port}`,
    `HostKey ${c.hostKeyFile}`,
    // /run is the node's own /run (bind mount), so the pid file is per node.
    "PidFile /run/sshd.pid",
    `AuthorizedKeysFile ${c.authorizedKeysFile}`,
    "PermitRootLogin prohibit-password",
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "UsePAM no",
    // the repo may live under a group-writable folder; the lab key is ours anyway
    "StrictModes no",
    "UseDNS no",
    "PrintMotd no",
    "PrintLastLog no",
    "X11Forwarding no",
    "AllowTcpForwarding no",
    "PermitUserEnvironment no",
    // the benchmark counts sessions from this log ("Accepted publickey for root")
    "LogLevel VERBOSE",
    "SyslogFacility AUTH",
    // parallel steps open many sessions at once
    "MaxStartups 500:30:1000",
    "MaxSessions 500",
    "LoginGraceTime 30",
    "Subsystem sftp internal-sftp",
  ];
  // OpenSSH 9.8 and later penalise sources whose sessions end badly (a killed sshd in a test).
  if (major > 9 || (major === 9 && minor >= 8)) lines.push("PerSourcePenalties no");
  return lines.join("\n") + "\n";
}
