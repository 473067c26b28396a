#!/usr/bin/env node
"use strict";
require("../lib/run.js")("beectl");
