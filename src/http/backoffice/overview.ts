// The back office's first page (docs/backoffice.md): the figures of operations/overview-figures.ts
// (the viewer's merchant's, or every merchant's for an operator) drawn by pages/backoffice/overview.ts.
import { merchantScope } from '../../domain/backoffice-access.js';
import { overviewFigures } from '../../operations/overview-figures.js';
import { overviewBody } from '../../pages/backoffice/overview.js';
import type { BackOfficeRoute } from './plugin.js';

export function overviewRoutes(): BackOfficeRoute[] {
  return [
    {
      method: 'GET',
      url: '/overview',
      roles: ['operator', 'merchant'],
      async handle(context) {
        const figures = await overviewFigures(context.deps, merchantScope(context.viewer));
        return context.page('Overview', '/backoffice/overview', overviewBody(figures));
      },
    },
  ];
}
