// Chat apps and mail clients fetch a link to draw its preview before a person opens it. The
// cashier's redirect_url is a one-time login link: a preview robot that used it would leave the
// customer with "link already used" (issue 19 item 10). Such robots are told apart by their
// User-Agent (they name themselves: that is how sites serve them preview cards) and by HEAD,
// which no browser uses to open a page. They get a neutral page; the link stays unused.

/**
 * Names robots put in their User-Agent. Only names no person's browser or in-app browser carries:
 * an app's own webview (Teams, Outlook) must still open the link, so app names alone are not here.
 */
const PREVIEW_ROBOTS = [
  'slackbot',
  'slack-imgproxy',
  'facebookexternalhit',
  'facebookcatalog',
  'whatsapp/',
  'twitterbot',
  'telegrambot',
  'discordbot',
  'linkedinbot',
  'skypeuripreview',
  'microsoftpreview',
  'applebot',
  'iframely',
  'embedly',
  'redditbot',
  'pinterestbot',
  'googlebot',
  'bingbot',
  'bingpreview',
  'yandexbot',
  'duckduckbot',
  'kakaotalk-scrap',
  'mattermost-bot',
  'crawler',
  'spider',
  'bot/',
  'bot;',
];

/** True for a request that previews a link rather than opens it: HEAD, or a User-Agent naming a preview robot or crawler. */
export function isLinkPreview(method: string, user_agent: string | undefined): boolean {
  if (method === 'HEAD') return true;
  const agent = (user_agent ?? '').toLowerCase();
  return PREVIEW_ROBOTS.some((name) => agent.includes(name));
}
