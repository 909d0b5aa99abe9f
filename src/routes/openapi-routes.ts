/** GET /openapi.json: the OpenAPI 3.1 description of the service (behind the token like every endpoint). */
import type Router from '@koa/router';
import { stringifyJson } from '../json-text';
import { openApiDocument } from '../openapi/openapi-document';

let text: string | undefined;

export function openapiRoutes(router: Router): void {
  router.get('/openapi.json', (ctx) => {
    // The document never changes while the process runs: serialize it once.
    text ??= stringifyJson(openApiDocument());
    ctx.status = 200;
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = text;
  });
}
