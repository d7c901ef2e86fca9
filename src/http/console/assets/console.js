// The console's only script (its Content-Security-Policy allows no other): draws the charts from
// the JSON each canvas names, with Chart.js, and reloads a page that asks to while a job runs.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  for (const canvas of document.querySelectorAll('canvas[data-chart]')) {
    fetch(canvas.dataset.chart, { credentials: 'same-origin' })
      .then((response) => (response.ok ? response.json() : Promise.reject(new Error(String(response.status)))))
      .then((chart) => {
        // Text from the server goes into Chart.js as data, never into the page's HTML.
        new window.Chart(canvas, {
          type: 'line',
          data: { labels: chart.labels, datasets: chart.datasets.map((dataset) => ({ label: dataset.label, data: dataset.data, tension: 0.2, fill: false })) },
          options: {
            animation: false,
            responsive: true,
            maintainAspectRatio: false,
            scales: { y: { beginAtZero: true, title: { display: true, text: chart.unit } } },
          },
        });
        canvas.dataset.drawn = 'true';
      })
      .catch((error) => {
        canvas.replaceWith(
          Object.assign(document.createElement('p'), { className: 'muted', textContent: `The chart could not be loaded (${error.message}).` }),
        );
      });
  }
  const refresh = document.querySelector('[data-refresh]');
  if (refresh) setTimeout(() => window.location.reload(), Number(refresh.dataset.refresh) * 1000);
});
