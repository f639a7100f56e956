/**
 * `npm run lab -- <command> [args]`: the lab's one entry point. Each command lives in its own module;
 * this file only dispatches.
 *
 *   up [--nodes N | <stack file>] [--version v1.33.2]   start lab nodes (nodes/)
 *   down                                                stop the lab's processes, remove .lab/ (nodes/)
 *   ssh <node> [command...]                             run a command on a node (nodes/)
 *   preview | apply | destroy | refresh <stack file>   pulumi preview/up/destroy/refresh on the lab
 *                                                       stack, by the real Pulumi CLI (engine/)
 *   kubectl ...                                         ask the stand-in cluster store (standin/)
 */
type Handler = (args: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Handler>> = {
  up: async () => (await import("./nodes/cli")).up,
  down: async () => (await import("./nodes/cli")).down,
  ssh: async () => (await import("./nodes/cli")).ssh,
  preview: async () => (await import("./engine/cli")).preview,
  apply: async () => (await import("./engine/cli")).apply,
  destroy: async () => (await import("./engine/cli")).destroy,
  refresh: async () => (await import("./engine/cli")).refresh,
  kubectl: async () => (await import("./standin/cli")).kubectl,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const load = name !== undefined ? commands[name] : undefined;
  if (!load) {
    process.stderr.write(`usage: npm run lab -- <${Object.keys(commands).join("|")}> [args]\n`);
    return 2;
  }
  return (await load())(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`lab: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
