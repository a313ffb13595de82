export function register(ctx) {}
