# frozen_string_literal: true

require_relative "../exchange"

module Heron
  module Response
    # A request's `rack.early_hints` (Rack 3's SPEC, Puma's `early_hints`): the app passes it
    # response headers before it answers (Rails' `send_early_hints`, which `preload_link_tag`,
    # `stylesheet_link_tag` and `javascript_include_tag` call), and they go out at once as a
    # `103 Early Hints` interim response, so the browser can fetch what they link to while the
    # app still works. Made only when `early_hints` is on, and never for an HTTP/1.0 request,
    # which cannot take an interim response (see Connection and HTTP2::Framing).
    class EarlyHints
      # @param request [Request] the request whose env gets this.
      # @param sender [#call] sends a 103 with the given Hash of headers (an HTTP/1.1 head or an
      #   HTTP/2 HEADERS frame), checking them as a response's; an HTTP/1.1 connection makes one
      #   for all its requests.
      def initialize(request, sender)
        @request = request
        @env = request.env
        @sender = sender
      end

      # Sends a `103 Early Hints` with these headers, unless the final response's head is
      # already out (a 1xx after it would corrupt the exchange) or the request is over.
      # @param headers [Hash{String => String, Array<String>}] e.g. `{ "link" => "</app.css>; rel=preload; as=style" }`;
      #   a value with "\n" in it (as Rails joins several links) or an Array is one field per part.
      # @return [nil]
      # @raise [Response::Invalid] for a header name that is not a token or a value with CR or NUL.
      def call(headers)
        return nil if @request.status || !@request.env.equal?(@env)
        @sender.call(headers)
        nil
      rescue *Exchange::GONE # the final response finds the client gone and is logged as usual
        nil
      end
    end
  end
end
