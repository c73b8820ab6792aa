/**
 * The dashboard (Ink, React), loaded only by the commands that draw it: every
 * other command would pay its start-up time. React runs its production build
 * (the development one costs several times the CPU a refresh) unless NODE_ENV
 * says otherwise; it reads NODE_ENV when first loaded, so it is set before.
 */
export async function loadDashboard() {
  process.env.NODE_ENV ??= 'production';
  return import('../src/dashboard/index.js');
}
