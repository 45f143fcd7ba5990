/**
 * The service's operations as (method, path pattern) pairs, built from the OpenAPI document.
 * Lets the error filter tell an unknown path (404) from a known path called with the wrong
 * method (405 with Allow).
 */
export class RouteTable {
  private readonly routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];

  /**
   * A table read from the document the first time a path is looked up: the service builds its
   * document after it listens (src/bootstrap.ts), not on the way to its first answer.
   */
  static deferred(document: () => { paths: object }): Pick<RouteTable, 'allowedMethods'> {
    let table: RouteTable | undefined;
    return { allowedMethods: (path) => (table ??= RouteTable.fromOpenApi(document())).allowedMethods(path) };
  }

  static fromOpenApi(document: { paths: object }): RouteTable {
    const table = new RouteTable();
    for (const [path, item] of Object.entries(document.paths as Record<string, object>)) {
      const methods = Object.keys(item).filter((m) =>
        ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'].includes(m),
      );
      table.add(
        path,
        methods.map((m) => m.toUpperCase()),
      );
    }
    return table;
  }

  add(openApiPath: string, methods: string[]): void {
    const source = openApiPath
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    this.routes.push({ pattern: new RegExp(`^${source}/?$`), methods: new Set(methods) });
  }

  /** Methods the path answers to; empty when no operation has this path. */
  allowedMethods(path: string): string[] {
    const allowed = new Set<string>();
    for (const route of this.routes) if (route.pattern.test(path)) route.methods.forEach((m) => allowed.add(m));
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed].sort();
  }
}
