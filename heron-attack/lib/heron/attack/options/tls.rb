# frozen_string_literal: true

require_relative "../usage_error"
require_relative "../tls_context"

module Heron
  module Attack
    class Options
      # How https certificates are checked: --insecure, or --cacert FILE, or (neither) the
      # system's CAs.
      class TLS
        # @return [OpenSSL::SSL::SSLContext, nil] the https context when --insecure or --cacert was
        #   given (set by {#check!}); nil lets the client verify against the system's CAs.
        attr_reader :context

        # Starts from verifying against the system's CAs.
        def initialize
          @insecure = false
        end

        # Defines --insecure and --cacert.
        # @param parser [OptionParser]
        # @return [void]
        def define(parser)
          parser.on("-k", "--insecure", "https: do not verify the certificate (self-signed staging certificates)") { @insecure = true }
          parser.on("--cacert FILE", "https: trust the CA certificates in this PEM file instead of the system's") { |v| @cacert = v }
        end

        # Checks the options and builds the context they ask for.
        # @param alpn [Array<String>] the protocols to offer.
        # @return [void]
        # @raise [UsageError] for both options, or a CA file that cannot be used.
        def check!(alpn)
          raise UsageError, "give --insecure or --cacert, not both" if @insecure && @cacert
          @context = TLSContext.build(insecure: @insecure, cacert: @cacert, alpn: alpn) if @insecure || @cacert
        end
      end
    end
  end
end
