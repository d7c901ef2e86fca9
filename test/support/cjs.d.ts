declare module '*.cjs';
