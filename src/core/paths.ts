import path from 'node:path';

/** The project's root, whether this runs from src/config/ or from the build's dist/src/config/. */
export const PROJECT_ROOT = path.resolve(__dirname, path.basename(path.resolve(__dirname, '../..')) === 'dist' ? '../../..' : '../..');

/** Where `npm run dev` and `npm run cluster` keep their files: DATA_DIR, or `.data/` in the project. */
export const dataDirOf = (env: NodeJS.ProcessEnv) => path.resolve(env.DATA_DIR || path.join(PROJECT_ROOT, '.data'));
