# frozen_string_literal: true

require "erb"
require_relative "helpers"

module Heron
  module Profiler
    class Dashboard
      # What the dashboard's pages share: the thing shown, the links' base URL and token, and a
      # compiled ERB template as the page's `render` method.
      class Page
        include Helpers

        # @!method render
        #   @return [String] the page body (HTML, without the {Layout}); defined by {.template}.

        # Compiles an ERB template (trim mode "-") into the calling class's `render` method.
        # @param source [String] the template.
        # @return [void]
        def self.template(source)
          ERB.new(source, trim_mode: "-").def_method(self, "render")
        end

        # @param subject [Object] what the page shows (records, or one record).
        # @param base [String] the dashboard's URL, e.g. "/__heron".
        # @param token [String, nil] a token to carry on in links.
        def initialize(subject, base, token)
          @subject = subject
          @base = base
          @token = token
        end
      end
    end
  end
end
