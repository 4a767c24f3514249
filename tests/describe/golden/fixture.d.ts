interface Hit {
  id: number;
  title: string;
  tags?: string[];
}

interface Point {
  x: number;
  y: number;
}

interface Box {
  corner: Point;
  label?: string | null;
}

/**
 * Documents that mention ``query``.
 *
 * @param query words to look for
 * @param limit at most this many hits
 */
declare function search(query: string, limit?: number): Promise<Hit[]>;

/**
 * Paint a box.
 */
declare function paint(box: Box, sky: "clear" | "rain", mode?: "fill" | "stroke", data?: Uint8Array | null, scores?: Record<string, number> | null): Promise<null>;

/**
 * The sum of ``values``.
 */
declare function total(...values: number[]): Promise<number>;

declare function anything(value: any): Promise<any>;

/**
 * Current weather for a city.
 */
declare function get_weather(input: {
  /** the city's name */
  city: string;
  units?: "celsius" | "fahrenheit";
  /** >= 1, <= 7 */
  days?: number;
}): Promise<{
  celsius: number;
  sky: string;
}>;

declare function class_(value: any): Promise<any>;
