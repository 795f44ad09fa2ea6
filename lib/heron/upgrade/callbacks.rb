# frozen_string_literal: true

module Heron
  module Upgrade
    # Calling a `rack.upgrade` handler's callbacks, for both kinds of session (Upgrade::Session,
    # Upgrade::StreamSession): a callback the handler lacks is skipped, and one that raises is
    # logged and reported to the session, which decides what to close.
    # Needs `@handler`, `@client` and `@context` (for its logger).
    module Callbacks
      private

      # Calls the handler's callback `name` with the client and `args`, if the handler has it.
      # @return [Boolean] false when the callback raised (logged), true otherwise.
      def run_callback(name, *args)
        @handler.public_send(name, @client, *args) if @handler.respond_to?(name)
        true
      rescue StandardError, ScriptError => e
        @context.logger.error("rack.upgrade handler's #{name} raised", e)
        false
      end
    end
  end
end
