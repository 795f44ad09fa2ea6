# frozen_string_literal: true

require_relative "../heron"
require_relative "server"
require_relative "testing/exchange"
require_relative "testing/response"
require_relative "testing/client"

module Heron
  # Runs a Rack app through Heron's real connection code in-process, over a socket pair (no
  # port), and returns what a client saw plus the env the app saw. Works from minitest and RSpec.
  #
  #   response = Heron::Testing.request(app, "POST", "/items", headers: { "content-type" => "text/plain" }, body: "x")
  #   response.status                       # => 201
  #   response.env["rack.after_reply"]      # => the callables the app registered
  #
  #   held = Heron::Testing.request(app, "GET", "/", run_callbacks: false)
  #   held.pending_callbacks                # => inspect them, then:
  #   held.run_callbacks!
  module Testing
    # Sends one request.
    # @param app [#call] the Rack app.
    # @param method [String] e.g. "GET".
    # @param path [String] path and query, e.g. "/items?page=2".
    # @param headers [Hash{String => String}] request headers.
    # @param body [String, nil] request body (sent with Content-Length).
    # @param run_callbacks [Boolean] run after-reply callbacks as in production (the default)
    #   before returning, or hold them for {Response#run_callbacks!}.
    # @param settings [Hash] Heron::Configuration settings (e.g. continue_mode: :eager).
    # @return [Response]
    def self.request(app, method, path, headers: {}, body: nil, run_callbacks: true, **settings)
      Client.new(app, run_callbacks: run_callbacks, **settings).request(method, path, headers: headers, body: body)
    end

    # Sends a request with `Expect: 100-continue` the way curl does: the head, then waits up to
    # `wait` seconds for `100 Continue` (or a final response) before sending the body.
    # @param wait [Numeric] seconds to wait for `100 Continue` (curl waits 1 s).
    # @return [Response] with {Response#continued?}, {Response#continue_after} and {Response#body_sent?}.
    def self.continue_request(app, method, path, body:, headers: {}, wait: 1.0, run_callbacks: true, **settings)
      client = Client.new(app, run_callbacks: run_callbacks, **settings)
      client.request(method, path, headers: headers.merge("expect" => "100-continue"), body: body, wait: wait)
    end
  end
end
