/** One side of the bench and its latency percentiles, in milliseconds. */
export interface LatencySeries {
  name: string;
  percentiles: Record<string, number>;
}

/**
 * A grouped bar chart as SVG: one group per percentile, one bar per side, labelled with its value.
 * No charting library: the file is small, self-contained and opens in any browser.
 */
export function latencyChart(title: string, series: LatencySeries[]): string {
  const keys = Object.keys(series[0]!.percentiles);
  const max = Math.max(...series.flatMap((side) => Object.values(side.percentiles)));
  const colors = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2'];
  const barWidth = 24;
  const groupWidth = series.length * barWidth + 40;
  const [height, left, top, bottom] = [360, 60, 50, 50];
  const legendX = left + keys.length * groupWidth + 20;
  const width = legendX + 300;
  const plot = height - top - bottom;
  const bars = keys.flatMap((key, group) =>
    series.map((side, index) => {
      const value = side.percentiles[key]!;
      const barHeight = (value / max) * plot;
      const x = left + group * groupWidth + 20 + index * barWidth;
      const y = top + plot - barHeight;
      return `<rect x="${x}" y="${y.toFixed(1)}" width="${barWidth - 4}" height="${barHeight.toFixed(1)}" fill="${colors[index % colors.length]}"/><text x="${x + (barWidth - 4) / 2}" y="${(y - 4).toFixed(1)}" font-size="10" text-anchor="middle">${value.toFixed(1)}</text>`;
    }),
  );
  const labels = keys.map(
    (key, group) =>
      `<text x="${left + group * groupWidth + 20 + (series.length * barWidth) / 2}" y="${height - bottom + 18}" font-size="12" text-anchor="middle">${key}</text>`,
  );
  const legend = series.map(
    (side, index) =>
      `<rect x="${legendX}" y="${top + index * 18}" width="12" height="12" fill="${colors[index % colors.length]}"/><text x="${legendX + 18}" y="${top + index * 18 + 10}" font-size="12">${escape(side.name)}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<text x="${left}" y="24" font-size="14" font-weight="bold">${escape(title)}</text>`,
    `<text x="14" y="${top + plot / 2}" font-size="11" transform="rotate(-90 14 ${top + plot / 2})" text-anchor="middle">latency, ms</text>`,
    `<line x1="${left}" y1="${top + plot}" x2="${legendX - 10}" y2="${top + plot}" stroke="#333"/>`,
    ...bars,
    ...labels,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
