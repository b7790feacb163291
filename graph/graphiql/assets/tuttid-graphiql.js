// Bootstrap for the embedded GraphiQL page served by tuttid/graph/graphiql.
// Not from npm. It lives in its own file so the page's Content-Security-Policy
// needs no 'unsafe-inline' for scripts. The endpoint comes from the
// data-endpoint attribute of #graphiql, written by the Go handler.
(function () {
  'use strict';

  var root = document.getElementById('graphiql');
  if (!root) {
    return;
  }

  function fail(text) {
    var p = document.createElement('p');
    p.className = 'tuttid-graphiql-message';
    p.textContent = text;
    root.replaceChildren(p);
  }

  if (typeof window.React === 'undefined' ||
      typeof window.ReactDOM === 'undefined' ||
      typeof window.GraphiQL === 'undefined') {
    fail('GraphiQL failed to load its scripts.');
    return;
  }

  // tuttid's token, as the GUI keeps it: in this origin's localStorage
  // (never a cookie, which every port of the host would get), taken from
  // ?token= (then removed from the address) or typed here; sent as the
  // Authorization header and in the WebSocket's connection_init.
  var tokenKey = 'tuttid-token';
  var pageURL = new URL(window.location.href);
  var fromURL = pageURL.searchParams.get('token');
  if (fromURL !== null) {
    if (fromURL.trim()) {
      window.localStorage.setItem(tokenKey, fromURL.trim());
    }
    pageURL.searchParams.delete('token');
    window.history.replaceState(window.history.state, '', pageURL.pathname + pageURL.search + pageURL.hash);
  }
  var token = window.localStorage.getItem(tokenKey) || '';

  // askToken shows a form for the token instead of GraphiQL (which would
  // answer every query "unauthenticated").
  function askToken() {
    var form = document.createElement('form');
    form.className = 'tuttid-graphiql-message';
    form.setAttribute('data-testid', 'token-page');
    var p = document.createElement('p');
    p.textContent = 'tuttid needs its token: open the address it printed at startup (it ends in ?token=…), ' +
      'or paste the token from the file token beside its database.';
    var input = document.createElement('input');
    input.type = 'password';
    input.autocomplete = 'off';
    input.required = true;
    input.setAttribute('aria-label', 'Token');
    input.setAttribute('data-testid', 'token-input');
    var button = document.createElement('button');
    button.type = 'submit';
    button.textContent = 'Open';
    form.append(p, input, button);
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      if (input.value.trim()) {
        window.localStorage.setItem(tokenKey, input.value.trim());
        window.location.reload();
      }
    });
    root.replaceChildren(form);
  }

  var endpoint = root.getAttribute('data-endpoint') || '/query';
  var httpURL = new URL(endpoint, window.location.href);

  // Subscriptions go over graphql-ws (graphql-transport-ws), whose client is
  // bundled in graphiql.min.js, at the same path with ws:// or wss://.
  var wsURL = new URL(httpURL.href);
  wsURL.protocol = httpURL.protocol === 'https:' ? 'wss:' : 'ws:';

  var auth = token ? { Authorization: 'Bearer ' + token } : {};
  var fetcher = window.GraphiQL.createFetcher({
    url: httpURL.href,
    subscriptionUrl: wsURL.href,
    headers: auth,
    wsConnectionParams: auth
  });

  function start() {
    window.ReactDOM.createRoot(root).render(
      window.React.createElement(window.GraphiQL, {
        fetcher: fetcher,
        defaultEditorToolsVisibility: true
      })
    );
  }

  // Without a token, ask for it unless the server checks none (--no-auth).
  if (token) {
    start();
    return;
  }
  fetch(httpURL.href, {
    method: 'POST',
    credentials: 'omit',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' })
  }).then(function (resp) {
    if (resp.status === 401) {
      askToken();
    } else {
      start();
    }
  }, start);
})();
