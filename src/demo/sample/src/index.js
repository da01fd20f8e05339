export { slugify } from "./slugify.js";
