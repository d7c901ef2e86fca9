/** The overview chart's data: events a second (each minute's average) by source, a point for each of the last `minutes` minutes. */
export function receivedChart(rows: Array<{ source: string; minute: Date; count: number }>, minutes: number, now = new Date()) {
  const last = Math.floor(now.getTime() / 60_000) * 60_000;
  const starts = Array.from({ length: minutes + 1 }, (_, index) => last - (minutes - index) * 60_000);
  const sources = [...new Set(rows.map((row) => row.source))].sort();
  const counts = new Map(rows.map((row) => [`${row.source} ${row.minute.getTime()}`, row.count]));
  return {
    unit: 'events a second',
    labels: starts.map((start) => new Date(start).toISOString().slice(11, 16)),
    datasets: sources.map((source) => ({ label: source, data: starts.map((start) => Math.round(((counts.get(`${source} ${start}`) ?? 0) / 60) * 100) / 100) })),
  };
}
