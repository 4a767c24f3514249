/**
 * Documents whose title or tags mention ``query`` (case-insensitive).
 */
declare function search(query: string, limit?: number): Promise<Record<string, any>[]>;

/**
 * Current weather for ``city``; raises KeyError for unknown cities.
 */
declare function weather(city: string): Promise<Record<string, any>>;

/**
 * a + b (a synchronous binding: tether runs it in a worker thread).
 */
declare function add(a: number, b: number): Promise<number>;
