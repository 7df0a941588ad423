/** A scenario module: its `main` runs the measurement and prints it. */
type Scenario = () => Promise<{ main(): Promise<void> | void }>;

/**
 * Runs the scenario named by the first argument (`npm run bench:micro -- pdf-extract`);
 * the rest of the arguments are the scenario's own. Each scenario is loaded only when
 * chosen, so one's set-up (a scratch folder, a build check) never runs for another.
 */
export function runScenario(script: string, scenarios: Readonly<Record<string, Scenario>>): void {
  const name = process.argv[2] ?? '';
  const load = Object.hasOwn(scenarios, name) ? scenarios[name] : undefined;
  if (load === undefined) {
    process.stderr.write(
      `usage: npm run ${script} -- <${Object.keys(scenarios).join('|')}> [options]\n`,
    );
    process.exit(2);
  }
  load()
    .then((scenario) => scenario.main())
    .catch((error: unknown) => {
      process.stderr.write(
        `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    });
}
